// Whether Memory V2 is ready to be the one sessions read (Codex: the readiness boundary of the
// version experiment): one successful V2 consolidation consumed at least `threshold` distinct
// sessions, and the V2 summary on disk is valid now.
import fs from "node:fs"
import { readRegularFile } from "../util/regular-file.js"
import { checkV2SummaryBytes, V2_SUMMARY_LIMIT_BYTES } from "../write/phase2/summary-v2.js"

export interface Readiness {
  /** The most distinct sessions one successful V2 consolidation consumed. */
  consolidatedSessions: number
  threshold: number
  /** Undefined when there is no summary; else the validation's verdict. */
  summary: { valid: true } | { valid: false; reason: string } | undefined
  ready: boolean
}

export function readiness(summaryFile: string, consolidatedSessions: number, threshold: number): Readiness {
  const stat = fs.lstatSync(summaryFile, { throwIfNoEntry: false })
  let summary: Readiness["summary"]
  // An oversized file is judged by its size, without reading it.
  if (stat?.isFile() && stat.size >= V2_SUMMARY_LIMIT_BYTES) summary = { valid: false, reason: `memory_summary.md has ${stat.size} bytes; V2 allows under ${V2_SUMMARY_LIMIT_BYTES}` }
  else {
    const bytes = stat?.isFile() ? readRegularFile(summaryFile) : undefined
    summary = bytes ? checkV2SummaryBytes(bytes) : undefined
  }
  return { consolidatedSessions, threshold, summary, ready: consolidatedSessions >= threshold && summary?.valid === true }
}
