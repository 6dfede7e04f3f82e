// OpenCode 1.x hooks, each a thin translation into the memory core, each inside the guard.
import type { Hooks } from "@opencode-ai/plugin"
import type { Guard } from "../guard.js"
import { memoryFolderRefusal, userFolderRules } from "../control/memory-folder-guard.js"
import type { Memory } from "../memory.js"
import { memoryRootForms } from "../write/helpers/helper-sandbox.js"
import { bundledAgents } from "../write/helpers/bundled-agents.js"
import { installHelperAgents } from "./agents.js"
import { hideFromTask, requireApprovalFor } from "./permissions.js"
import { toV1Tools } from "./tools.js"

export function createV1Hooks(memory: Memory, guard: Guard): Hooks {
  // The memory folder's guard: its roots, and whether the user's own permission rules decide for it.
  const folder = { roots: memory.controls.memoryRoots.flatMap((root) => memoryRootForms(root)), userDecides: { files: false, shell: false } }
  const guarded = {
    toolUse: guard("tool.execute.before", (input: { sessionID: string; tool: string }) => memory.onToolUse(input.sessionID, input.tool)),
  }
  return {
    config: guard("config", async (config) => {
      folder.userDecides = userFolderRules(config.permission, folder.roots)
      // memory_reset must ask the user even under agents that allow everything.
      requireApprovalFor(config, "memory_reset")
      memory.learnHostConfig(config)
      if (!memory.options.generate_memories) return
      const agents = bundledAgents(memory.packageDir, memory.paths.memoryRoot, { prompts: memory.helperPrompts })
      // The plugin starts its helpers itself; no agent is offered them through `task`.
      hideFromTask(config, Object.keys(agents))
      const installed = installHelperAgents(config, agents)
      if (installed.added.length) memory.diagnostics.report("debug", "config", `added agents: ${installed.added.join(", ")}`)
      memory.noteHelperAgentOverrides(installed.ignored)
    }),

    tool: toV1Tools(memory.tools(), memory.diagnostics),

    "experimental.chat.system.transform": guard("experimental.chat.system.transform", (input, output) => {
      const call = { sessionID: input.sessionID, system: output.system }
      const block = memory.systemBlock(call)
      // One appended string: OpenCode keeps it as its own system message, so it caches separately.
      if (block) output.system.push(block)
      // After the memory block, so the block's bytes stay a stable prefix of what OpenCode joins.
      const checkpoint = memory.checkpointBlock(call)
      if (checkpoint) output.system.push(checkpoint)
    }),

    // Runs before OpenCode stores the finished text part: the citation block never reaches the
    // UI or the saved history.
    "experimental.text.complete": guard("experimental.text.complete", (input, output) => {
      output.text = memory.citations.completeText(input.sessionID, input.partID, output.text)
    }),

    "experimental.chat.messages.transform": guard("experimental.chat.messages.transform", (_input, output) => {
      memory.citations.stripHistory(output.messages as never)
    }),

    "chat.message": guard("chat.message", (input, output) => {
      memory.onChatMessage(input.sessionID)
      const texts = output.parts.flatMap((part) => (part.type === "text" && !part.synthetic && !part.ignored ? [part.text] : []))
      memory.onUserMessage(input.sessionID, output.message.id, texts)
    }),

    "tool.execute.after": guard("tool.execute.after", (input, output) => {
      memory.onToolResult(input.sessionID, { tool: input.tool, callID: input.callID, args: input.args, metadata: output?.metadata })
    }),

    // Adds the checkpoint view to the compaction prompt; a failure leaves OpenCode's own compaction as it is.
    "experimental.session.compacting": guard("experimental.session.compacting", (input, output) => {
      const view = memory.onCompacting(input.sessionID)
      if (view) output.context.push(view)
    }),

    // Outside the guard on purpose: a refusal must reach OpenCode as the tool's error. The
    // consolidator runs in the memory folder's own instance, which refuses nothing.
    "tool.execute.before": async (input, output) => {
      await guarded.toolUse(input)
      if (memory.servesHelpers) return
      const refusal = memoryFolderRefusal(input.tool, output?.args, { ...folder, directory: memory.directory })
      if (refusal) throw new Error(`Refused: ${refusal}`)
    },

    event: guard("event", ({ event }) => {
      const type = event.type as string
      const properties = event.properties as { sessionID?: string; status?: { type?: string }; part?: unknown }
      if (type === "message.part.updated") memory.citations.observePart(properties.part as never)
      else if (type === "session.idle" && properties.sessionID) memory.onSessionIdle(properties.sessionID)
      else if (type === "session.status" && properties.status?.type === "idle" && properties.sessionID) memory.onSessionIdle(properties.sessionID)
      else if (type === "session.compacted" && properties.sessionID) memory.onCompacted(properties.sessionID)
      else if (type === "session.deleted") {
        const info = (event.properties as { info?: { id?: string } }).info
        const id = properties.sessionID ?? info?.id
        if (id) memory.onSessionDeleted(id)
      }
    }),

    dispose: guard("dispose", () => memory.dispose()),
  }
}
