// What differs between memory versions in phase 2: which inputs the workspace gets, what the
// consolidator is told, what a finished consolidation must leave, and what is put back when it
// fails. The run itself (claim, workspace, diff, agent, commit) is phase2.ts, for every version.
import type { Phase2Input } from "../store/phase2-jobs.js"
import { renderConsolidationPrompt, renderConsolidationV2Prompt, type ConsolidationTemplates } from "./consolidate-prompt.js"
import { restoreSummary, snapshotSummary, validateV2Artifacts } from "./summary-v2.js"
import { syncInputs, validateArtifacts, type SyncResult } from "./workspace.js"

export type ArtifactCheck = { valid: true } | { valid: false; reason: string }

export interface ConsolidationStrategy {
  /** Rewrites the workspace's inputs from the selection. */
  syncInputs(root: string, inputs: readonly Phase2Input[], now: () => number): Promise<SyncResult>
  /** The consolidator's instructions. */
  renderPrompt(input: { memoryRoot: string; firstRun: boolean }): string
  /** What a finished consolidation must leave in the folder. */
  validate(root: string): ArtifactCheck
  /**
   * Called before the consolidator runs; the function it returns is called when the run failed or
   * left invalid artifacts, and puts back what the version protects.
   */
  preserve(root: string): () => void
}

/** V1: raw memories and summaries in; MEMORY.md and a `v1` summary out; a failure leaves the folder to the next run's diff. */
export function v1Consolidation(templates: ConsolidationTemplates): ConsolidationStrategy {
  return {
    syncInputs: (root, inputs, now) => syncInputs(root, inputs, { now }),
    renderPrompt: (input) => renderConsolidationPrompt(templates, input),
    validate: validateArtifacts,
    preserve: () => () => undefined,
  }
}

/**
 * V2: rollout summaries in; one summary out, valid by Codex's V2 rules. The consolidator writes in
 * place, so the last valid summary is kept aside and put back (or an invalid new one removed)
 * when the run fails: an invalid summary never replaces a valid one.
 */
export function v2Consolidation(templates: ConsolidationTemplates): ConsolidationStrategy {
  return {
    syncInputs: (root, inputs, now) => syncInputs(root, inputs, { now, layout: "v2" }),
    renderPrompt: (input) => renderConsolidationV2Prompt(templates, input),
    validate: validateV2Artifacts,
    preserve: (root) => {
      const previous = snapshotSummary(root)
      return () => void restoreSummary(root, previous)
    },
  }
}
