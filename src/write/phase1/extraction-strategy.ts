// How one memory version turns a claimed session into an extraction request, and the helper's
// answer into a record. The extraction job (extraction-job.ts) is the same for every version:
// load, sanitize, ask, store; only these two steps differ. V1 renders the whole transcript in one
// message and asks for a raw memory and a summary; V2 selects tiered evidence in chunks and asks
// for the summary alone.
import { selectEvidence } from "./evidence.js"
import { EXTRACTION_SCHEMA, parseExtraction, renderExtractionPrompt, type ExtractionResult, type ExtractionTemplates } from "./extract.js"
import { EXTRACTION_V2_SCHEMA, parseExtractionV2, renderExtractionV2Prompt } from "./extract-v2.js"
import { renderSinglePrompt } from "./generate-prompt.js"
import type { OwnToolCall } from "../transcript/own-output.js"
import type { SessionInput } from "./session-input.js"
import { renderTranscript, type TranscriptMessage } from "../transcript/transcript.js"

export interface ExtractionRequest {
  system: string
  /** One text part, or several (V2 sends its evidence chunk by chunk). */
  text: string | readonly string[]
  schema: Record<string, unknown>
}

export interface ExtractionBuildInput {
  sessionId: string
  /** The session folder's git branch, cleaned like every other host string; absent outside a repository. */
  branch?: string
  /** The project's name, cleaned like every other host string; absent when the folder is no project. */
  project?: string
  /** The claim's watermark: the session's last activity. */
  updatedAt: number
  messages: readonly TranscriptMessage[]
  /** The sanitized session: every string in the request comes from it. */
  input: SessionInput
  /** Transcript budget in tokens (70% of the extraction model's window, or the fallback). */
  budgetTokens: number
  /** Tool calls whose result is memory's own text, left out (own-output.ts). */
  ownTool?: OwnToolCall
}

export interface BuiltRequest {
  request: ExtractionRequest
  /** Secrets the rendering replaced, by class, for the audit. */
  redactions: Record<string, number>
  /** Nothing of the session could be rendered: handled as an empty transcript, with no model call. */
  empty?: boolean
}

export interface ExtractionStrategy {
  build(source: ExtractionBuildInput): BuiltRequest
  parse(answer: unknown, cwd: string): ExtractionResult
  /** The request as one prompt, for a host whose only model call is a tool-less completion. */
  singlePrompt(request: ExtractionRequest): string
}

export function v1Extraction(templates: ExtractionTemplates): ExtractionStrategy {
  return {
    singlePrompt: (request) => renderSinglePrompt(templates.reminder, request),
    build({ sessionId, project, updatedAt, messages, input, budgetTokens, ownTool }) {
      const transcript = renderTranscript(messages, { maxTokens: budgetTokens, ...input.transcript, ...(ownTool ? { ownTool } : {}) })
      const prompt = renderExtractionPrompt(templates, {
        sessionId,
        title: input.session.title,
        cwd: input.session.directory,
        project,
        updatedAt,
        transcript: transcript.text,
      })
      return { request: { ...prompt, schema: EXTRACTION_SCHEMA }, redactions: { ...transcript.redactions } }
    },
    parse: (answer, cwd) => parseExtraction(templates, answer, cwd),
  }
}

/**
 * V2: tiered evidence within the same budget (estimated tokens), sent as one text part per chunk after a
 * short header; the folder's git branch is a hint.
 */
export function v2Extraction(templates: ExtractionTemplates): ExtractionStrategy {
  return {
    singlePrompt: (request) => renderSinglePrompt(templates.reminder, request),
    build({ sessionId, branch, project, updatedAt, messages, input, budgetTokens, ownTool }) {
      const evidence = selectEvidence(messages, { budgetTokens, ...input.transcript, ...(ownTool ? { ownTool } : {}) })
      const prompt = renderExtractionV2Prompt(templates, {
        sessionId,
        title: input.session.title,
        cwd: input.session.directory,
        branch,
        project,
        updatedAt,
        chunks: evidence.chunks,
      })
      return {
        request: { system: prompt.system, text: prompt.texts, schema: EXTRACTION_V2_SCHEMA },
        redactions: { ...evidence.redactions },
        ...(evidence.chunks.length === 0 ? { empty: true } : {}),
      }
    },
    parse: (answer, cwd) => parseExtractionV2(templates, answer, cwd),
  }
}
