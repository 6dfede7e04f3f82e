import type { MemoryToolPorts } from "./ports.js"
import { defineTool } from "./spec.js"

export function inspectTool(memory: MemoryToolPorts, description: string) {
  return defineTool({
    name: "memory_inspect",
    description,
    args: {},
    async execute() {
      const report = memory.inspect()
      return { title: "memory state", output: report.text, metadata: report.data }
    },
  })
}
