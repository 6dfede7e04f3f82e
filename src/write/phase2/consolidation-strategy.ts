// What differs between memory versions in phase 2: which inputs the workspace gets, what the
// consolidator is told, what a finished consolidation must leave, and what is put back when it
// fails. The run itself (claim, workspace, diff, agent, commit) is phase2.ts, for every version.
import type { Phase2Input } from "../../store/phase2-jobs.js"
import { renderConsolidationPrompt, renderConsolidationV2Prompt, type ConsolidationTemplates } from "./consolidate-prompt.js"
import { checkV2Summary, validateV2Artifacts } from "./summary-v2.js"
import { checkV1Summary, syncInputs, validateArtifacts, type SyncResult } from "./workspace.js"

export type ArtifactCheck = { valid: true } | { valid: false; reason: string }

export interface ConsolidationStrategy {
  /** Rewrites the workspace's inputs from the selection. */
  syncInputs(root: string, inputs: readonly Phase2Input[], now: () => number): Promise<SyncResult>
  /** The consolidator's instructions. */
  renderPrompt(input: { memoryRoot: string; firstRun: boolean }): string
  /**
   * What a finished consolidation must leave in the folder. A run that leaves anything else is
   * undone: phase 2 puts the whole folder back as it was before (run-snapshot.ts).
   */
  validate(root: string): ArtifactCheck
  /** Whether a summary's text may be injected (the read path serves the last one that may). */
  acceptsSummary(text: string): ArtifactCheck
}

/** V1: raw memories and summaries in; MEMORY.md and a `v1` summary out. */
export function v1Consolidation(templates: ConsolidationTemplates): ConsolidationStrategy {
  return {
    syncInputs: (root, inputs, now) => syncInputs(root, inputs, { now }),
    renderPrompt: (input) => renderConsolidationPrompt(templates, input),
    validate: validateArtifacts,
    acceptsSummary: checkV1Summary,
  }
}

/** V2: rollout summaries in; one summary out, valid by Codex's V2 rules. */
export function v2Consolidation(templates: ConsolidationTemplates): ConsolidationStrategy {
  return {
    syncInputs: (root, inputs, now) => syncInputs(root, inputs, { now, layout: "v2" }),
    renderPrompt: (input) => renderConsolidationV2Prompt(templates, input),
    validate: validateV2Artifacts,
    acceptsSummary: checkV2Summary,
  }
}
