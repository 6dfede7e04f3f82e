// Decides, per model call, whether memory is injected and with which bytes.
import { READ_PATH } from "../constants.js"
import { renderMemoryBlock, type ReadPathTemplates } from "./render.js"
import { SummaryFile, type SummaryRead } from "./summary-file.js"

export interface SystemCall {
  sessionID?: string | undefined
  /** The system array as OpenCode built it; only read here. */
  system: readonly string[]
}

export interface ReadPathConfig {
  memoryRoot: string
  summaryFile: string
  dedicatedTools: boolean
  templates: ReadPathTemplates
  /** True for sessions the plugin started itself (extraction, consolidation). */
  isHelperSession: (sessionID: string) => boolean
  onRefuse: (reason: string) => void
  /** The version's rule for a summary that may be injected (V1: first line `v1`; V2: Codex's check). */
  accepts?: (text: string) => { valid: true } | { valid: false; reason: string }
  /**
   * The copy an unfinished consolidation keeps of the folder (write/run-snapshot.ts): while it is
   * whole, its summary is memory and the folder's is not (the run's output, not validated yet).
   * `whole` is asked on disk whenever the summary's identity has changed since the last call, and
   * at every call while the copy is what is served: the run may be another process's, or a killed
   * one's, and a run takes its copy before it writes, so its first write changes the identity.
   */
  pendingCopy?: { summaryFile: string; whole: () => boolean }
}

export class ReadPath {
  private readonly summary: SummaryFile
  private readonly fallback: SummaryFile | undefined
  /** The renderings of the reads seen last, by read (a cached object while its file is unchanged). */
  private readonly renderings = new Map<SummaryRead, string | undefined>()
  /** The block of the last summary that passed the version's check, in this instance. */
  private lastGood: string | undefined
  /** The folder's read the last call saw (the same object while the file is unchanged). */
  private lastRead: SummaryRead | undefined
  /** Whether the last call served the copy of an unfinished consolidation. */
  private servingCopy = false

  constructor(private readonly config: ReadPathConfig) {
    this.summary = new SummaryFile(config.memoryRoot, config.summaryFile, config.onRefuse)
    this.fallback = config.pendingCopy ? new SummaryFile(config.memoryRoot, config.pendingCopy.summaryFile, config.onRefuse, () => undefined) : undefined
  }

  /**
   * The block to append for this call, or undefined when nothing is to be injected. While a
   * consolidation is unfinished (running, failed midway, or killed) the summary of its copy is
   * served, never the folder's. A summary that fails the version's check is never injected: the
   * last good one this instance served is instead. A summary that is simply gone (a reset, a fresh
   * home) means no memory.
   */
  blockFor(call: SystemCall): string | undefined {
    if (!isConversationCall(call, this.config.isHelperSession)) return undefined
    if (this.servingCopy) {
      const pending = this.pendingBlock()
      if (pending) return pending.block
      this.servingCopy = false
    }
    const read = this.summary.read()
    // An unchanged file is what was served last without a copy: committed. A changed one may be a
    // run's output, and the copy is looked for after the read, since a run copies before it writes.
    const changed = read !== this.lastRead
    this.lastRead = read
    const started = changed ? this.pendingBlock() : undefined
    if (started) {
      this.servingCopy = true
      return started.block
    }
    const own = read.kind === "present" ? this.render(read, true) : undefined
    if (own !== undefined) return (this.lastGood = own)
    return read.kind === "present" ? this.lastGood : undefined
  }

  /** What is served while a whole copy exists; undefined when there is none (or it went during the read). */
  private pendingBlock(): { block: string | undefined } | undefined {
    if (!this.fallback || !this.config.pendingCopy?.whole()) return undefined
    const aside = this.fallback.read()
    if (aside.kind === "present") return { block: this.render(aside, false) ?? this.lastGood }
    // The copy holds no summary (memory had none before the run), unless it was dropped meanwhile.
    return this.config.pendingCopy.whole() ? { block: undefined } : undefined
  }

  invalidate(): void {
    this.summary.invalidate()
    this.fallback?.invalidate()
    this.renderings.clear()
    this.lastGood = undefined
    this.lastRead = undefined
    this.servingCopy = false
  }

  /** The block of a read, once per read; undefined when it fails the version's check (said once). */
  private render(read: Extract<SummaryRead, { kind: "present" }>, own: boolean): string | undefined {
    if (this.renderings.has(read)) return this.renderings.get(read)
    const check = this.config.accepts?.(read.text) ?? { valid: true }
    if (!check.valid && own) this.config.onRefuse(`memory summary ${this.config.summaryFile} is not a valid summary (${check.reason}); not injected, the last valid one is served instead`)
    const block = check.valid
      ? renderMemoryBlock(this.config.templates, { memoryRoot: this.config.memoryRoot, summary: read.text, summaryCut: read.cut, dedicatedTools: this.config.dedicatedTools })
      : undefined
    // Only the reads of the current files matter: older entries go.
    if (this.renderings.size > 4) this.renderings.clear()
    this.renderings.set(read, block)
    return block
  }
}

/**
 * True for a model call of a user's conversation: the calls that get memory, and the first real
 * use that freezes a session's memory version. Not: calls without a session (OpenCode generating
 * agent definitions), the plugin's own helper sessions, and the title agent, which reuses the
 * conversation's session id and is told apart only by its prompt.
 */
export function isConversationCall(call: SystemCall, isHelperSession: (sessionID: string) => boolean): call is SystemCall & { sessionID: string } {
  if (!call.sessionID || isHelperSession(call.sessionID)) return false
  return !call.system.some((entry) => entry.startsWith(READ_PATH.TITLE_PROMPT_PREFIX))
}
