// The memory block appended to the system prompt. Pure: the same inputs give the same bytes, which
// is what keeps the provider's prompt cache warm from one turn to the next.
import path from "node:path"
import { READ_PATH } from "../constants.js"
import type { MemoryVersion } from "../util/paths.js"
import { truncateMiddle } from "../util/tokens.js"
import { loadTemplate, renderTemplate, type Template } from "../util/templates.js"

export interface ReadPathTemplates {
  main: Template
  lookupTools: Template
  lookupFiles: Template
  updateTools: Template
  updateFiles: Template
}

/**
 * V1 reads the handbook-oriented templates; V2 the recap-oriented ones under templates/v2/. Both
 * share the update steps (one ad-hoc note), so renderMemoryBlock takes the same inputs for either.
 */
export function loadReadPathTemplates(templatesDir: string, version: MemoryVersion = "v1"): ReadPathTemplates {
  const own = version === "v2" ? path.join(templatesDir, "v2") : templatesDir
  return {
    main: loadTemplate(own, "read_path.md"),
    lookupTools: loadTemplate(own, "read_path/lookup_tools.md"),
    lookupFiles: loadTemplate(own, "read_path/lookup_files.md"),
    updateTools: loadTemplate(templatesDir, "read_path/update_tools.md"),
    updateFiles: loadTemplate(templatesDir, "read_path/update_files.md"),
  }
}

export interface MemoryBlockInput {
  memoryRoot: string
  /** The trimmed, non-empty summary text. */
  summary: string
  /** The summary is already the 2,500-token middle cut (SummaryRead's `cut`): it is not cut again. */
  summaryCut?: boolean
  /** Whether the memory_* tools are registered; otherwise the model is told to use plain file tools. */
  dedicatedTools: boolean
}

export function renderMemoryBlock(templates: ReadPathTemplates, input: MemoryBlockInput): string {
  const fragment = (template: Template) => renderTemplate(template, {}).trimEnd()
  return renderTemplate(templates.main, {
    memory_root: input.memoryRoot,
    lookup_steps: fragment(input.dedicatedTools ? templates.lookupTools : templates.lookupFiles),
    update_steps: fragment(input.dedicatedTools ? templates.updateTools : templates.updateFiles),
    memory_summary: input.summaryCut ? input.summary : truncateMiddle(input.summary, READ_PATH.SUMMARY_TOKEN_LIMIT),
  }).trimEnd()
}
