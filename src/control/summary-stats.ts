// Size of a memory summary as memory_inspect reports it, read without loading a huge file.
import fs from "node:fs"
import { READ_PATH } from "../constants.js"
import { estimateTokens } from "../util/tokens.js"

export interface SummaryStats {
  bytes: number
  estimatedTokens: number
  injected: boolean
  /** Longer than the 2,500 tokens the read path injects: it is cut in the middle. */
  capped: boolean
}

export function summaryStats(file: string, injected: boolean): SummaryStats | undefined {
  const stat = fs.lstatSync(file, { throwIfNoEntry: false })
  if (!stat?.isFile()) return undefined
  // A huge summary is not read whole just to report its size.
  if (stat.size > 1024 * 1024) return { bytes: stat.size, estimatedTokens: Math.ceil(stat.size / READ_PATH.BYTES_PER_TOKEN), injected, capped: true }
  const text = fs.readFileSync(file, "utf8").trim()
  if (!text) return undefined
  const estimatedTokens = estimateTokens(text)
  return { bytes: stat.size, estimatedTokens, injected, capped: estimatedTokens > READ_PATH.SUMMARY_TOKEN_LIMIT }
}
