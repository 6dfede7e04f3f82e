// The consolidation prompt (pure): the main template with the first-run or incremental fragment.
// V1 and V2 share the shape; V2's templates live under templates/v2/.
import path from "node:path"
import { loadTemplate, renderTemplate, type Template } from "../../util/templates.js"

export interface ConsolidationTemplates {
  main: Template
  init: Template
  incremental: Template
}

export function loadConsolidationTemplates(templatesDir: string): ConsolidationTemplates {
  return {
    main: loadTemplate(templatesDir, "consolidation.md"),
    init: loadTemplate(path.join(templatesDir, "consolidation"), "init.md"),
    incremental: loadTemplate(path.join(templatesDir, "consolidation"), "incremental.md"),
  }
}

export function renderConsolidationPrompt(templates: ConsolidationTemplates, input: { memoryRoot: string; firstRun: boolean }): string {
  const mode = renderTemplate(input.firstRun ? templates.init : templates.incremental, {}).trimEnd()
  return renderTemplate(templates.main, { memory_root: input.memoryRoot, mode_instructions: mode }).trimEnd()
}

/** Memory V2's templates: the same shape, under templates/v2/, asking for memory_summary.md only. */
export function loadConsolidationV2Templates(templatesDir: string): ConsolidationTemplates {
  return loadConsolidationTemplates(path.join(templatesDir, "v2"))
}

/** `firstRun`: there is no valid V2 summary yet (validateV2Artifacts failed before the run). */
export function renderConsolidationV2Prompt(templates: ConsolidationTemplates, input: { memoryRoot: string; firstRun: boolean }): string {
  return renderConsolidationPrompt(templates, input)
}

/** The user message that starts the consolidator; the instructions go in as its system prompt. */
export const CONSOLIDATION_REQUEST = "Consolidate the memory folder now, following your instructions. Reply with one line saying what changed."
