// One OpenCode 2 location's registrations, each a thin translation into the memory core inside
// the guard (a hook that throws would fail the host's operation, so none may):
//   - tools: the memory and control tools, native (codemode off); glob and grep wrapped so a
//     consolidation helper's search stays in its memory root;
//   - agents: the helper agents, and an ask before memory_reset for every other agent;
//   - session hooks, one per kind of request (OpenCode 2 runs `context` for agent-loop requests
//     only): `context` appends the memory block and then the frozen checkpoint view, and gives a
//     helper session its instructions; `compaction` gets the checkpoint view (2.1.2 always asks
//     its compaction model, so "replace" runs as augment); `title` and `generate` get nothing; every
//     one strips citation blocks from the history it sends (V2 keeps them in stored replies);
//     `prompt` is a user's message (and the checkpoint's task);
//   - tool hooks: a tool about to run (external-context pollution), one finished (checkpoint);
//   - the status RPC the TUI part calls;
//   - the event stream: turns ending, deletions, replies ending (citations counted), compactions
//     ending (the view frozen, the closed segment captured).
import { errorMessage } from "../diagnostics.js"
import type { Guard } from "../guard.js"
import type { HostRegistrations } from "../host.js"
import type { Memory } from "../memory.js"
import { bundledAgents } from "../write/helpers/bundled-agents.js"
import { memoryRootForms } from "../write/helpers/helper-sandbox.js"
import type { V2Context, V2Event, V2ModelMessage, V2Registration, V2SessionAuxiliary, V2SessionCompaction, V2SessionContext, V2SessionPrompt, V2ToolEditor, V2ToolExecuteAfter } from "./api.js"
import { installV2Agents } from "./agents.js"
import { MEMORY_RPC, type MemoryStatus, type SwitchName } from "./rpc.js"
import { confineFile, confineSearch } from "./sandbox.js"
import { toV2Tools } from "./tools.js"

/** What a location needs from the process-wide runtime (runtime.ts). */
export interface LocationRuntime {
  readonly confined: ReadonlyMap<string, string>
  readonly helperSystem: ReadonlyMap<string, string>
  /** A session seen in this process (the fallback list when there is no service). */
  observe(sessionId: string): void
  forget(sessionId: string): void
  /** False for an event another location's stream already delivered. */
  firstSight(eventId: string | undefined): boolean
  status(): MemoryStatus
  setSwitch(name: SwitchName, value: boolean): Promise<void>
}

const IDLE_EVENTS = new Set(["session.execution.succeeded", "session.execution.failed", "session.execution.interrupted", "session.idle"])

/** What one location's registrations came to: each by name, and the ones the host refused. */
export type RegistrationReport = HostRegistrations

/**
 * Registers everything one location offers. Each registration stands alone: one the host refuses
 * is reported (memory_inspect, the log, the status RPC when it is there) and the others, and the
 * event pump, go on without it.
 */
export async function registerLocation(ctx: V2Context, memory: Memory, runtime: LocationRuntime, guard: Guard, signal: AbortSignal): Promise<{ registrations: V2Registration[]; report: RegistrationReport }> {
  const registrations: V2Registration[] = []
  const report: RegistrationReport = { registered: [], failed: [] }
  const register = async (name: string, make: () => Promise<V2Registration>) => {
    try {
      registrations.push(await make())
      report.registered.push(name)
    } catch (error) {
      report.failed.push({ name, message: errorMessage(error) })
      memory.diagnostics.error(`register ${name}`, error)
    }
  }
  const tools = toV2Tools(memory.tools(), memory.diagnostics, ctx.permission)
  await register("tools", () =>
    ctx.tool.transform((editor) => {
      for (const tool of tools) editor.add(tool)
      confineSearchTools(editor, runtime.confined)
    }),
  )
  // Read before registering: transform callbacks are synchronous and replayed on every rebuild.
  const agents = memory.options.generate_memories ? bundledAgents(memory.packageDir, memory.paths.memoryRoot, { prompts: memory.helperPrompts }) : undefined
  const roots = memory.controls.memoryRoots.flatMap((root) => memoryRootForms(root))
  await register("agents", async () => {
    const registration = await ctx.agent.transform((editor) => installV2Agents(editor, agents, roots))
    // Some releases apply a transform made during setup only after a reload.
    await ctx.agent.reload?.()
    return registration
  })
  const hooks: Array<[string, () => Promise<V2Registration>]> = [
    ["session.context", () => ctx.session.hook("context", guard("session.context", (event: V2SessionContext) => contextHook(event, memory, runtime)))],
    [
      "session.prompt",
      () =>
        ctx.session.hook(
          "prompt",
          guard("session.prompt", (event: V2SessionPrompt) => {
            runtime.observe(event.sessionID)
            memory.sessionFolder(event.sessionID, ctx.location.directory)
            memory.onChatMessage(event.sessionID)
            if (event.messageID && typeof event.prompt?.text === "string") memory.onUserMessage(event.sessionID, event.messageID, [event.prompt.text])
          }),
        ),
    ],
    ["session.compaction", () => ctx.session.hook("compaction", guard("session.compaction", (event: V2SessionCompaction) => compactionHook(event, memory)))],
    ["session.title", () => ctx.session.hook("title", guard("session.title", (event: V2SessionAuxiliary) => stripCitations(event.sessionID, event.messages, memory)))],
    ["session.generate", () => ctx.session.hook("generate", guard("session.generate", (event: V2SessionAuxiliary) => stripCitations(event.sessionID, event.messages, memory)))],
    ["tool.execute.before", () => ctx.tool.hook("execute.before", guard("tool.execute.before", (event: { sessionID: string; tool: string }) => memory.onToolUse(event.sessionID, event.tool)))],
    [
      "tool.execute.after",
      () =>
        ctx.tool.hook(
          "execute.after",
          guard("tool.execute.after", (event: V2ToolExecuteAfter) => {
            memory.sessionFolder(event.sessionID, ctx.location.directory)
            memory.onToolResult(event.sessionID, { tool: event.tool, callID: event.id ?? "", args: event.input, metadata: event.status === "completed" ? event.result?.metadata : undefined })
          }),
        ),
    ],
  ]
  for (const [name, make] of hooks) await register(name, make)
  const rpc = ctx.rpc
  if (rpc) {
    await register("rpc", () =>
      rpc.register(MEMORY_RPC, {
        status: async () => runtime.status(),
        setSwitch: async (input) => {
          const { name, value } = input as { name: SwitchName; value: boolean }
          await runtime.setSwitch(name, value)
          return runtime.status()
        },
        reset: async () => memory.controls.reset(),
      }),
    )
  }
  void pumpEvents(ctx, memory, runtime, guard, signal)
  return { registrations, report }
}

function contextHook(event: V2SessionContext, memory: Memory, runtime: LocationRuntime): void {
  // A helper session gets its own instructions (V2 prompts take no system text) and nothing else.
  const instructions = runtime.helperSystem.get(event.sessionID)
  if (instructions !== undefined) {
    event.system.push({ type: "text", text: instructions })
    return
  }
  stripCitations(event.sessionID, event.messages, memory)
  const call = { sessionID: event.sessionID, system: event.system.map((part) => (typeof part.text === "string" ? part.text : "")) }
  const block = memory.systemBlock(call)
  if (block) event.system.push({ type: "text", text: block })
  // Its own system part, after the memory block: each keeps its bytes and its cache segment.
  const checkpoint = memory.checkpointBlock(call)
  if (checkpoint) event.system.push({ type: "text", text: checkpoint })
}

/**
 * The compaction model gets the checkpoint view to build on. 2.1.2 reads back only the system,
 * messages, options and tools of this event, never a result, so the model is always asked and
 * checkpoint.mode "replace" runs as augment (memory.ts warns of it).
 */
function compactionHook(event: V2SessionCompaction, memory: Memory): void {
  stripCitations(event.sessionID, event.messages, memory)
  const view = memory.onCompacting(event.sessionID)
  if (view) event.system.push({ type: "text", text: view })
}

/** Citation blocks kept in stored replies are removed from what the model is sent, and counted once. */
function stripCitations(sessionId: string, messages: V2ModelMessage[], memory: Memory): void {
  for (const message of messages) {
    if (message.role !== "assistant") continue
    if (typeof message.content === "string") {
      message.content = memory.citations.storedText(sessionId, message.content)
      continue
    }
    if (!Array.isArray(message.content)) continue
    for (const part of message.content as Array<{ type?: unknown; text?: unknown }>) {
      if (part?.type === "text" && typeof part.text === "string") part.text = memory.citations.storedText(sessionId, part.text)
    }
  }
}

/**
 * The built-in file and search tools, for a confined helper session: its root only. glob and grep
 * are checked by pattern in the rules, so this check is their only path bound; read, write and
 * edit get it too, beside the rules.
 */
function confineSearchTools(editor: V2ToolEditor, confined: ReadonlyMap<string, string>): void {
  const checks = { glob: confineSearch, grep: confineSearch, read: confineFile, write: confineFile, edit: confineFile }
  for (const [id, check] of Object.entries(checks)) {
    if (!editor.get(id)) continue
    editor.update(id, (tool) => {
      const original = tool.execute
      tool.execute = async (input, call) => {
        const root = confined.get(call.sessionID)
        if (root === undefined) return original(input, call)
        const checked = check(input, root)
        // Thrown, not returned: 2.1.2's built-in tools declare an output, and a result without
        // one reaches the model as "Tool did not return its declared output"; a thrown error's
        // message reaches it as the tool's error, so the consolidator reads why.
        if (!checked.ok) throw new Error(`Refused: ${checked.reason}`)
        return original(checked.input, call)
      }
    })
  }
}

async function pumpEvents(ctx: V2Context, memory: Memory, runtime: LocationRuntime, guard: Guard, signal: AbortSignal): Promise<void> {
  const handle = guard("event", (event: V2Event) => onEvent(event, memory, runtime))
  try {
    for await (const event of ctx.event.subscribe({ signal })) {
      if (signal.aborted) return
      if (!runtime.firstSight(event.id)) continue
      await handle(event)
    }
  } catch (error) {
    if (!signal.aborted) memory.diagnostics.error("event", error)
  }
}

function onEvent(event: V2Event, memory: Memory, runtime: LocationRuntime): void {
  const data = event.data ?? {}
  const sessionId = typeof data.sessionID === "string" ? data.sessionID : undefined
  if (!sessionId) return
  if (IDLE_EVENTS.has(event.type) || (event.type === "session.status" && (data.status as { type?: unknown } | undefined)?.type === "idle")) {
    runtime.observe(sessionId)
    memory.onSessionIdle(sessionId)
  } else if (event.type === "session.created") runtime.observe(sessionId)
  else if (event.type === "session.compaction.ended") memory.onCompacted(sessionId)
  else if (event.type === "session.deleted") {
    runtime.forget(sessionId)
    memory.onSessionDeleted(sessionId)
  } else if (event.type === "session.text.ended" && typeof data.text === "string") memory.citations.storedText(sessionId, data.text)
}
