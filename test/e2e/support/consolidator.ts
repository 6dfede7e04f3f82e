// A scripted consolidator that does what the workspace diff tells it, and nothing else: it reads
// phase2_workspace_diff.md and the current MEMORY.md and memory_summary.md through OpenCode's
// read tool, then writes both files holding the facts MEMORY.md had, plus every fact on an added
// diff line, minus every fact only on removed lines. A fact is a line fragment starting with
// "FACT-<NAME>:". So a note or a session reaches memory only if the diff shows it, and is
// forgotten only if the diff shows it gone: a test built on it fails when phase 2 does not run,
// or runs without the change in its diff.
import path from "node:path"
import { contentText, lastUserText, type AgentHandler, type ChatMessage, type ChatRequest } from "./fake-llm.js"

/** The consolidator's user message starts with this (src/write/consolidate-prompt.ts). */
export const CONSOLIDATE = "Consolidate the memory folder now"
const DIFF_FILE = "phase2_workspace_diff.md"
const FACT = /FACT-[A-Z]+: .*$/

export interface ConsolidatorRun {
  /** The diff as the read tool returned it. */
  diff: string
  added: string[]
  removed: string[]
  facts: string[]
}

/** The handler, and the record of every run it finished (the last one last). */
export function diffDrivenConsolidator(root: string): { handler: AgentHandler; runs: ConsolidatorRun[] } {
  const runs: ConsolidatorRun[] = []
  const file = (name: string) => path.join(root, name)
  const handler: AgentHandler = (request) => {
    if (!lastUserText(request).includes(CONSOLIDATE)) return undefined
    const calls = (request.messages ?? []).filter((m) => m.role === "assistant" && (m.tool_calls ?? []).length > 0).length
    if (calls === 0) {
      return { toolCalls: [DIFF_FILE, "MEMORY.md", "memory_summary.md"].map((name) => ({ name: "read", arguments: { filePath: file(name) } })) }
    }
    if (calls === 1) {
      const results = toolResults(request)
      const diff = results.get(file(DIFF_FILE)) ?? ""
      const { added, removed } = diffFacts(diff)
      const before = factsIn(results.get(file("MEMORY.md")) ?? "")
      const facts = [...new Set([...before, ...added])].filter((fact) => !removed.includes(fact) || added.includes(fact))
      runs.push({ diff, added, removed, facts })
      const body = facts.map((fact) => `- ${fact}`).join("\n")
      const handbook = `# Task group: facts\nscope: everything learned\napplies_to: cwd=any; reuse_rule=always\n\n## Reusable knowledge\n${body}\n`
      return { toolCalls: [{ name: "write", arguments: { filePath: file("MEMORY.md"), content: handbook } }] }
    }
    if (calls === 2) {
      const facts = runs.at(-1)?.facts ?? []
      const summary = `v1\n## User profile\nA developer.\n\n## What's in memory\n${facts.map((fact) => `- ${fact}`).join("\n")}\n`
      return { toolCalls: [{ name: "write", arguments: { filePath: file("memory_summary.md"), content: summary } }] }
    }
    return { text: "Updated MEMORY.md and memory_summary.md from the diff." }
  }
  return { handler, runs }
}

/** Facts on added and on removed lines of a unified diff, as OpenCode's read tool returns it ("12: <line>"). */
export function diffFacts(diff: string): { added: string[]; removed: string[] } {
  const added = new Set<string>()
  const removed = new Set<string>()
  for (const numbered of diff.split("\n")) {
    const line = numbered.replace(/^\d+: /, "")
    const sign = line[0]
    if ((sign !== "+" && sign !== "-") || line.startsWith("+++ ") || line.startsWith("--- ")) continue
    const fact = FACT.exec(line.slice(1))?.[0].trim()
    if (fact) (sign === "+" ? added : removed).add(fact)
  }
  return { added: [...added], removed: [...removed] }
}

function factsIn(text: string): string[] {
  return text.split("\n").flatMap((line) => FACT.exec(line)?.[0].trim() ?? [])
}

/** Each read tool result of the conversation, by the file it read. */
function toolResults(request: ChatRequest): Map<string, string> {
  const files = new Map<string, string>()
  for (const message of request.messages ?? []) {
    for (const call of message.tool_calls ?? []) {
      try {
        const args = JSON.parse(call.function?.arguments ?? "{}") as { filePath?: string }
        if (call.id && args.filePath) files.set(call.id, args.filePath)
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
