// What extraction takes from the host about one session, made safe in one step, where the
// session and its messages enter the write path. Every string the host gave is user data: the
// title is written by OpenCode's title agent from the user's first message (so it carries what
// that message carried), the project folder is named by the user, and the messages are the
// conversation. From here on the write path sees only what this returns:
//   - the title and the folder, with `<private>` spans cut, the text of every private span of the
//     session removed where it is repeated, and secrets redacted (the transcript's own steps, in
//     the transcript's order, with the same redactor); a title the host cut short loses the word
//     the cut went through, since a secret cut in half is no longer recognisable;
//   - the hooks that do the same to the transcript (renderTranscript), built from the same spans;
//   - no metadata: nothing the write path does needs it, so none of it can reach a sink.
import type { HostSession } from "../../host.js"
import { PRIVATE_SPAN_CLASS } from "../../redact/private.js"
import { addCounts, redact } from "../../redact/redact.js"
import { privateFilter } from "../transcript/transcript-private.js"
import type { TranscriptMessage, TranscriptOptions } from "../transcript/transcript.js"

/** A session as the write path may use it: the host's id and times, cleaned strings, no metadata. */
export interface SafeSession {
  readonly id: string
  readonly title: string
  /** The project folder, cleaned: it is stored as the record's `cwd` and written to the memory folder. */
  readonly directory: string
  readonly updatedAt: number
}

export interface SessionInput {
  readonly session: SafeSession
  /** For renderTranscript: cuts private spans from user text, and removes their repeats anywhere. */
  readonly transcript: Required<Pick<TranscriptOptions, "transformUserText" | "scrub">>
  /** The same steps for any other string taken from the host later (a git branch name): counted too. */
  clean(text: string): string
  /**
   * What was kept out, by class, for the audit: secrets in the title and folder, and every private
   * span cut (from the title and folder, and from the transcript's user text once it is rendered).
   * The transcript's own secret counts come with the rendered transcript.
   */
  redactions(): Record<string, number>
}

export function sanitizeSession(session: HostSession, messages: readonly TranscriptMessage[]): SessionInput {
  // Spans marked in the title or folder name are hidden wherever else they appear too.
  const hidden = privateFilter(messages, [session.title, session.directory])
  const counts: Record<string, number> = {}
  // The steps a user's text part goes through: private spans cut, repeats removed, then redaction.
  const clean = (text: string): string => {
    const result = redact(hidden.scrub(hidden.transformUserText(text)))
    addCounts(counts, result.counts)
    return result.text
  }
  return {
    session: { id: session.id, title: clean(dropCutWord(session.title)), directory: clean(session.directory), updatedAt: session.updatedAt },
    transcript: { transformUserText: hidden.transformUserText, scrub: hidden.scrub },
    clean,
    redactions: () => {
      const removed = hidden.removed()
      return removed ? addCounts({ ...counts }, { [PRIVATE_SPAN_CLASS]: removed }) : { ...counts }
    },
  }
}

/**
 * OpenCode keeps the first 97 characters of a long title and appends "...": when the cut goes
 * through a token, what is left of it no longer has the token's shape and the redactor cannot
 * know it. So the word before a trailing ellipsis is dropped (at worst one word of a title that
 * really ended in "..."). Scanned from the end: linear however long the title is.
 */
export function dropCutWord(title: string): string {
  const ellipsis = title.endsWith("...") ? "..." : title.endsWith("\u2026") ? "\u2026" : ""
  if (!ellipsis) return title
  const body = title.slice(0, title.length - ellipsis.length)
  let start = body.length
  while (start > 0 && !/\s/.test(body[start - 1]!)) start--
  return start === body.length ? title : `${body.slice(0, start)}${ellipsis}`
}
