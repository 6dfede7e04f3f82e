// Memory V2's phase-1 extraction as pure steps, beside V1's (extract.ts): the prompt for one
// session, whose evidence (evidence.ts) goes in separate text parts after the input template, and
// the checks on the answer. V2 asks for the session summary and a slug only: there is no raw
// memory, and consolidation reads the summaries.
import path from "node:path"
import { redact, redactText } from "../../redact/redact.js"
import { loadTemplate, renderTemplate } from "../../util/templates.js"
import { z } from "../../util/zod.js"
import { capBytes, ROLLOUT_SUMMARY_MAX_BYTES } from "../../store/record-caps.js"
import { SINGLE_PROMPT_REMINDER, answerValue, cleanSlug, describeIssues, findEcho, oneLine, templateEchoes, type ExtractionResult, type ExtractionTemplates } from "./extract.js"

/** Codex's V2 summary cap: a summary is cut to this many UTF-8 bytes, marker included. */
export const V2_SUMMARY_MAX_BYTES = ROLLOUT_SUMMARY_MAX_BYTES
/** A branch name is a hint: a long one is cut rather than allowed to crowd the prompt. */
const BRANCH_MAX_CHARS = 200

/**
 * What OpenCode's `format: json_schema` asks the model for. As in Codex's V2 contract the slug is a
 * required string, never null: every V2 summary file is named with one (an empty string leaves it out).
 */
export const EXTRACTION_V2_SCHEMA = Object.freeze({
  type: "object",
  properties: {
    rollout_summary: { type: "string", description: "Chronological account of the session, or empty" },
    rollout_slug: { type: "string", description: "Short lowercase dash-separated topic, at most 60 characters, or empty" },
  },
  required: ["rollout_summary", "rollout_slug"],
  additionalProperties: false,
})

// Lenient where the schema is strict, like V1 (Codex refuses both): a null or missing slug or an
// extra field costs nothing. OpenCode cannot promise strict schema enforcement on every provider,
// and OpenCode 2's generate.text has no schema at all, so refusing would turn a usable answer into
// a failed job and a paid retry; an extra field is dropped, never stored.
const answerSchema = z.object({
  rollout_summary: z.string(),
  rollout_slug: z.string().nullable().optional(),
})

/** The V2 templates, `v2/` under the templates folder, with the sentences an echo would repeat. */
export function loadExtractionV2Templates(templatesDir: string): ExtractionTemplates {
  const system = loadTemplate(templatesDir, path.join("v2", "stage_one_system.md"))
  const input = loadTemplate(templatesDir, path.join("v2", "stage_one_input.md"))
  return { system, input, reminder: loadTemplate(templatesDir, SINGLE_PROMPT_REMINDER), echoes: templateEchoes([system, input]) }
}

export interface ExtractionV2Source {
  sessionId: string
  title: string
  cwd: string
  /** From gitBranch(); undefined when the folder is not in a repository. */
  branch: string | undefined
  /** The project's name (already cleaned); undefined when the folder is no project. */
  project?: string | undefined
  updatedAt: number
  /** The evidence chunks (selectEvidence), in order. */
  chunks: readonly string[]
}

/** The system prompt, and the user's text parts: the input template first, then one per evidence chunk. */
export function renderExtractionV2Prompt(templates: ExtractionTemplates, source: ExtractionV2Source): { system: string; texts: string[] } {
  // Read from disk, not from the host: redacted here, since no sanitizer has seen it.
  const branch = redactText((source.branch ?? "").replace(/\s+/g, " ").trim().slice(0, BRANCH_MAX_CHARS))
  const input = renderTemplate(templates.input, {
    session_id: source.sessionId,
    session_title: source.title.replace(/\s+/g, " ") || "(untitled)",
    cwd: source.cwd || "(unknown)",
    git_branch: branch || "(unknown)",
    project: oneLine(source.project) || "(none)",
    updated_at: new Date(source.updatedAt).toISOString(),
  }).trimEnd()
  return { system: renderTemplate(templates.system, {}).trimEnd(), texts: [input, ...source.chunks] }
}

/**
 * Checks an answer. A blank summary means "nothing to remember"; a malformed answer or an echo of
 * the prompt fails the job. What is kept is redacted again (the model may have written a secret
 * back out), then cut to V2_SUMMARY_MAX_BYTES.
 */
export function parseExtractionV2(templates: ExtractionTemplates, answer: unknown, cwd: string): ExtractionResult {
  const value = answerValue(answer)
  if (value === undefined) return { type: "invalid", reason: "the extractor's answer is not valid JSON" }
  const parsed = answerSchema.safeParse(value)
  if (!parsed.success) return { type: "invalid", reason: `the extractor's answer does not match the schema: ${describeIssues(parsed.error.issues)}` }
  const summary = parsed.data.rollout_summary.trim()
  if (!summary) return { type: "empty" }
  const echo = findEcho(templates, summary)
  if (echo) return { type: "invalid", reason: `the extractor echoed its instructions ("${echo.slice(0, 60)}...")` }
  // Redacted before the cut, so that no secret is cut in half and missed.
  const safeSummary = redact(summary)
  // The slug becomes part of a file name: a secret in it is redacted before cleanSlug mangles it.
  const safeSlug = parsed.data.rollout_slug == null ? undefined : redact(parsed.data.rollout_slug)
  const counts: Record<string, number> = { ...safeSummary.counts }
  for (const [key, n] of Object.entries(safeSlug?.counts ?? {})) counts[key] = (counts[key] ?? 0) + n
  const rolloutSummary = capBytes(safeSummary.text, V2_SUMMARY_MAX_BYTES)
  const cuts = rolloutSummary === safeSummary.text ? [] : [{ field: "rollout_summary" as const, bytes: Buffer.byteLength(safeSummary.text, "utf8") }]
  return {
    type: "memory",
    memory: { rawMemory: "", rolloutSummary, slug: cleanSlug(safeSlug?.text ?? null), cwd: cwd ? path.normalize(cwd) : null },
    redactions: counts,
    cuts,
  }
}
