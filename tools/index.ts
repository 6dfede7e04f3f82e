// The tool set of one memory instance. Memory tools need `use_memories` and `dedicated_tools`;
// the control tools are always there, so a user can inspect, pause or erase memory at any time.
import path from "node:path"
import { loadTemplate } from "../src/util/templates.js"
import { addNoteTool } from "./add-note.js"
import { checkpointTool } from "./checkpoint.js"
import { inspectTool } from "./inspect.js"
import { listTool } from "./list.js"
import { modeTool } from "./mode.js"
import type { CheckpointPorts, MemoryToolPorts } from "./ports.js"
import { readTool } from "./read.js"
import { resetTool } from "./reset.js"
import { searchTool } from "./search.js"
import type { ToolSpec } from "./spec.js"

export interface ToolSetOptions {
  memoryTools: boolean
  templatesDir: string
  /** The session checkpoint's tool, when checkpoints are on (independent of the memory tools). */
  checkpoints?: CheckpointPorts
}

export function createMemoryTools(memory: MemoryToolPorts, options: ToolSetOptions): ToolSpec[] {
  const describe = (name: string) => loadTemplate(path.join(options.templatesDir, "tools"), `${name}.md`).text.trim()
  const control: ToolSpec[] = [
    inspectTool(memory, describe("memory_inspect")),
    modeTool(memory, describe("memory_mode")),
    resetTool(memory, describe("memory_reset")),
  ] as ToolSpec[]
  if (options.checkpoints) control.unshift(checkpointTool(options.checkpoints, describe("memory_checkpoint")) as ToolSpec)
  if (!options.memoryTools) return control
  const tools = [
    readTool((sessionId) => memory.backendFor(sessionId), describe("memory_read")),
    searchTool((sessionId) => memory.backendFor(sessionId), describe("memory_search")),
    listTool((sessionId) => memory.backendFor(sessionId), describe("memory_list")),
    addNoteTool(memory, describe("memory_add_note")),
  ] as ToolSpec[]
  return [...tools, ...control]
}
