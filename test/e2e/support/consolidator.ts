// A scripted consolidator that does what the workspace diff tells it, and nothing else: it reads
// phase2_workspace_diff.md and the files it keeps through OpenCode's read tool, then writes them
// holding the facts it had, plus every fact on an added diff line, minus every fact only on
// removed lines. By default a fact is a line fragment starting with "FACT-<NAME>:". So a note or
// a session reaches memory only if the diff shows it, and is forgotten only if the diff shows it
// gone: a test built on it fails when phase 2 does not run, or runs without the change in its diff.
//
// It serves one memory folder: a request for another folder (the other version's consolidator,
// with dual-write) is left to the next handler. V1 keeps MEMORY.md and a summary; V2 keeps only a
// summary, in the shape Codex's V2 validator accepts.
import path from "node:path"
import { contentText, lastUserText, systemTexts, type AgentHandler, type ChatMessage, type ChatRequest } from "./fake-llm.js"

/** The consolidator's user message starts with this (src/write/phase2/consolidate-prompt.ts). */
export const CONSOLIDATE = "Consolidate the memory folder now"
const DIFF_FILE = "phase2_workspace_diff.md"
const DEFAULT_FACT = /FACT-[A-Z]+: .*$/

export interface ConsolidatorRun {
  /** The diff as the read tool returned it. */
  diff: string
  added: string[]
  removed: string[]
  facts: string[]
}

export interface ConsolidatorOptions {
  /** The memory version whose files it writes; V1 by default. */
  layout?: "v1" | "v2"
  /** What a fact looks like in a line (the match is the fact). */
  fact?: RegExp
  /** The argument the host's file tools name their file with: OpenCode 1 `filePath`, OpenCode 2 `path`. */
  pathKey?: "filePath" | "path"
  /** Lines carrying this tag are passed over, as the echo rule asks (`[from opencode]` in Codex's imported memory). */
  skipTagged?: string
}

/** Where an added fact came from: its file in the folder, and that file's header lines (session_id, date, cwd...). */
export interface FactOrigin {
  file: string
  headers: Readonly<Record<string, string>>
}

/** The handler, and the record of every run it finished (the last one last). */
export function diffDrivenConsolidator(root: string, options: ConsolidatorOptions = {}): { handler: AgentHandler; runs: ConsolidatorRun[] } {
  const layout = options.layout ?? "v1"
  const pattern = options.fact ?? DEFAULT_FACT
  const key = options.pathKey ?? "filePath"
  const runs: ConsolidatorRun[] = []
  // V2 entries name the file a fact came from, as the diff showed it when the fact was added.
  const origins = new Map<string, FactOrigin>()
  const file = (name: string) => path.join(root, name)
  // The file whose facts carry over from run to run: V1's handbook, V2's only file.
  const keeper = layout === "v1" ? "MEMORY.md" : "memory_summary.md"
  const writes = layout === "v1" ? ["MEMORY.md", "memory_summary.md"] : ["memory_summary.md"]
  const render = (name: string, facts: string[]) =>
    name === "MEMORY.md" ? handbook(facts) : layout === "v1" ? summaryV1(facts) : summaryV2(facts.map((fact) => ({ fact, origin: origins.get(fact) })))
  const handler: AgentHandler = (request) => {
    if (!lastUserText(request).includes(CONSOLIDATE) || !servesRoot(request, root)) return undefined
    const calls = (request.messages ?? []).filter((m) => m.role === "assistant" && (m.tool_calls ?? []).length > 0).length
    if (calls === 0) {
      return { toolCalls: [DIFF_FILE, ...writes].map((name) => ({ name: "read", arguments: { [key]: file(name) } })) }
    }
    if (calls === 1) {
      const results = toolResults(request)
      const diff = results.get(file(DIFF_FILE)) ?? ""
      const { added, removed, addedFrom } = diffFacts(diff, pattern, options.skipTagged)
      for (const [fact, origin] of addedFrom) origins.set(fact, origin)
      const before = factsIn(results.get(file(keeper)) ?? "", pattern)
      const facts = [...new Set([...before, ...added])].filter((fact) => !removed.includes(fact) || added.includes(fact))
      runs.push({ diff, added, removed, facts })
    }
    const name = writes[calls - 1]
    if (name) return { toolCalls: [{ name: "write", arguments: { [key]: file(name), content: render(name, runs.at(-1)?.facts ?? []) } }] }
    return { text: `Updated ${writes.join(" and ")} from the diff.` }
  }
  return { handler, runs }
}

/**
 * Facts on added and on removed lines of a unified diff, as OpenCode's read tool returns it
 * ("12: <line>"), and for each added fact the file it was added to, with that file's added
 * `name: value` header lines.
 */
export function diffFacts(diff: string, pattern: RegExp = DEFAULT_FACT, skipTagged?: string): { added: string[]; removed: string[]; addedFrom: Map<string, FactOrigin> } {
  const added = new Set<string>()
  const removed = new Set<string>()
  const addedFrom = new Map<string, FactOrigin>()
  let current: { file: string; headers: Record<string, string> } | undefined
  for (const numbered of diff.split("\n")) {
    const line = numbered.replace(/^\d+: /, "")
    if (line.startsWith("+++ ")) {
      const target = line.slice(4).trim()
      current = target === "/dev/null" ? undefined : { file: target.replace(/^b\//, ""), headers: {} }
      continue
    }
    const sign = line[0]
    if ((sign !== "+" && sign !== "-") || line.startsWith("--- ")) continue
    const header = sign === "+" ? /^\+([a-z_]+): (.+)$/.exec(line) : null
    if (header && current) current.headers[header[1]!] ??= header[2]!
    if (skipTagged && line.includes(skipTagged)) continue
    const fact = pattern.exec(line.slice(1))?.[0].trim()
    if (!fact) continue
    if (sign === "+") {
      added.add(fact)
      if (current) addedFrom.set(fact, current)
    } else removed.add(fact)
  }
  return { added: [...added], removed: [...removed], addedFrom }
}

function handbook(facts: string[]): string {
  return `# Task group: facts\nscope: everything learned\napplies_to: project=any; reuse_rule=always\n\n## Reusable knowledge\n${bullets(facts)}\n`
}

function summaryV1(facts: string[]): string {
  return `v1\n## User profile\nA developer.\n\n## What's in memory\n${bullets(facts)}\n`
}

/** Codex's V2 shape: recent work by project (the `project` header, else `cwd`) and date, each entry an exact pointer. */
function summaryV2(entries: ReadonlyArray<{ fact: string; origin: FactOrigin | undefined }>): string {
  const groups = new Map<string, string[]>()
  for (const { fact, origin } of entries) {
    const where = origin ? `### ${origin.headers.project ?? origin.headers.cwd ?? "(no folder)"}\n#### ${origin.headers.date ?? "(no date)"}` : "### Older Memory Topics"
    const entry = origin ? `- ${origin.file} — ${fact}; session=${origin.headers.session_id ?? "(unknown)"}` : `- ${fact}`
    groups.set(where, [...(groups.get(where) ?? []), entry])
  }
  const memory = [...groups].map(([where, lines]) => `${where}\n${lines.join("\n")}`).join("\n\n")
  return `v1\n## User Profile\nA developer.\n\n## User preferences\n\n## General Tips\n\n## What's in Memory\n${memory}\n`
}

function bullets(facts: string[]): string {
  return facts.map((fact) => `- ${fact}`).join("\n")
}

/** The consolidation prompts name their folder in backquotes, so `/m/memories` never matches `/m/memories_v2`. */
function servesRoot(request: ChatRequest, root: string): boolean {
  return systemTexts(request).some((text) => text.includes(`\`${root}\``))
}

function factsIn(text: string, pattern: RegExp): string[] {
  return text.split("\n").flatMap((line) => pattern.exec(line)?.[0].trim() ?? [])
}

/** Each read tool result of the conversation, by the file it read. */
function toolResults(request: ChatRequest): Map<string, string> {
  const files = new Map<string, string>()
  for (const message of request.messages ?? []) {
    for (const call of message.tool_calls ?? []) {
      try {
        const args = JSON.parse(call.function?.arguments ?? "{}") as { filePath?: string; path?: string }
        const target = args.filePath ?? args.path
        if (call.id && target) files.set(call.id, target)
      } catch {
        // not a call this consolidator made
      }
    }
  }
  const results = new Map<string, string>()
  for (const message of (request.messages ?? []) as ChatMessage[]) {
    const target = message.role === "tool" && message.tool_call_id ? files.get(message.tool_call_id) : undefined
    if (target) results.set(target, contentText(message.content))
  }
  return results
}
