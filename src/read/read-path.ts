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
}

export class ReadPath {
  private readonly summary: SummaryFile
  private renderedFor: SummaryRead | undefined
  private rendered = ""

  constructor(private readonly config: ReadPathConfig) {
    this.summary = new SummaryFile(config.memoryRoot, config.summaryFile, config.onRefuse)
  }

  /** The block to append for this call, or undefined when nothing is to be injected. */
  blockFor(call: SystemCall): string | undefined {
    if (!isConversationCall(call, this.config.isHelperSession)) return undefined
    const read = this.summary.read()
    if (read.kind !== "present") return undefined
    // The summary read is a cached object while the file is unchanged, so this renders once per change.
    if (read !== this.renderedFor) {
      this.rendered = renderMemoryBlock(this.config.templates, {
        memoryRoot: this.config.memoryRoot,
        summary: read.text,
        summaryCut: read.cut,
        dedicatedTools: this.config.dedicatedTools,
      })
      this.renderedFor = read
    }
    return this.rendered
  }

  invalidate(): void {
    this.summary.invalidate()
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
