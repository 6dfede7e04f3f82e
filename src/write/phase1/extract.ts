// Phase-1 extraction as pure steps: the prompt for one session, the answer's schema, and the
// checks that turn the model's answer into a record, "nothing to remember", or a failure.
import path from "node:path"
import { redact } from "../../redact/redact.js"
import { loadTemplate, renderTemplate, type Template } from "../../util/templates.js"
import { z } from "../../util/zod.js"
import { capRecord, type CappedRecord } from "../../store/record-caps.js"

export const SLUG_MAX = 60
/** The reminder that ends a single-prompt extraction, for every version. */
export const SINGLE_PROMPT_REMINDER = "stage_one_generate.md"

/** What OpenCode's `format: json_schema` asks the model for. */
export const EXTRACTION_SCHEMA = Object.freeze({
  type: "object",
  properties: {
    rollout_summary: { type: "string", description: "Readable account of the session, or empty" },
    raw_memory: { type: "string", description: "Durable lessons for consolidation, or empty" },
    rollout_slug: { type: ["string", "null"], description: "Short lowercase dash-separated topic, at most 60 characters" },
  },
  required: ["rollout_summary", "raw_memory", "rollout_slug"],
  additionalProperties: false,
})

// Lenient where the schema is strict (Codex's parser refuses unknown fields): OpenCode cannot
// promise strict schema enforcement on every provider, and OpenCode 2's generate.text has none, so
// an extra field is dropped rather than failing a usable answer and paying for a retry.
const answerSchema = z.object({
  rollout_summary: z.string(),
  raw_memory: z.string(),
  rollout_slug: z.string().nullable().optional(),
})

export interface ExtractionTemplates {
  system: Template
  input: Template
  /** Ends a single-prompt extraction (generate-prompt.ts); shared by every version. */
  reminder: Template
  /** Long sentences of both templates: finding one in an answer means the model echoed its prompt. */
  echoes: readonly string[]
}

export function loadExtractionTemplates(templatesDir: string): ExtractionTemplates {
  const system = loadTemplate(templatesDir, "stage_one_system.md")
  const input = loadTemplate(templatesDir, "stage_one_input.md")
  return { system, input, reminder: loadTemplate(templatesDir, SINGLE_PROMPT_REMINDER), echoes: templateEchoes([system, input]) }
}

/** The long sentences of the templates (40 characters or more, no placeholder), whitespace collapsed. */
export function templateEchoes(templates: readonly Template[]): string[] {
  return templates
    .flatMap((t) => t.text.split(/\n\s*\n|\n(?=\s*(?:#|-|\*|\d+\.)\s)/))
    .flatMap((block) => collapseSpace(block.replace(/^\s*(?:#+|-|\*|\d+\.)\s+/, "")).split(/(?<=[.!?:])\s+/))
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length >= 40 && !sentence.includes("{{"))
}

/** The first template sentence found in `text` (whitespace collapsed), when the model echoed its prompt. */
export function findEcho(templates: ExtractionTemplates, text: string): string | undefined {
  const collapsed = collapseSpace(text)
  return templates.echoes.find((sentence) => collapsed.includes(sentence))
}

/** The answer as a value: a string is parsed as JSON (undefined when it is not JSON), anything else is taken as is. */
export function answerValue(answer: unknown): unknown {
  return typeof answer === "string" ? parseJson(answer) : answer
}

/** A schema failure in words, naming each field that is wrong. */
export function describeIssues(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string {
  return issues.map((i) => `${i.path.map(String).join(".") || "answer"} ${i.message}`).join("; ")
}

export interface ExtractionSource {
  sessionId: string
  title: string
  cwd: string
  /** The project's name (already cleaned); undefined when the folder is no project. */
  project?: string | undefined
  updatedAt: number
  transcript: string
}

export function renderExtractionPrompt(templates: ExtractionTemplates, source: ExtractionSource): { system: string; text: string } {
  return {
    system: renderTemplate(templates.system, {}).trimEnd(),
    text: renderTemplate(templates.input, {
      session_id: source.sessionId,
      session_title: source.title.replace(/\s+/g, " ") || "(untitled)",
      cwd: source.cwd || "(unknown)",
      project: oneLine(source.project) || "(none)",
      updated_at: new Date(source.updatedAt).toISOString(),
      transcript: source.transcript,
    }).trimEnd(),
  }
}

/** A host string as one header line of a prompt. */
export function oneLine(text: string | undefined): string {
  return (text ?? "").replace(/\s+/g, " ").trim()
}

export interface ExtractedMemory {
  rawMemory: string
  rolloutSummary: string
  slug: string | null
  cwd: string | null
}

export type ExtractionResult =
  /** `cuts`: the fields over their cap (record-caps.ts), cut before anything is stored. */
  | { type: "memory"; memory: ExtractedMemory; redactions: Record<string, number>; cuts: CappedRecord["cuts"] }
  | { type: "empty" }
  | { type: "invalid"; reason: string }

/**
 * Checks an answer. Blank fields mean "nothing to remember"; a malformed answer or an echo of
 * the prompt fails the job (and is retried), so nothing half-formed is stored. What is kept is
 * redacted again (the model may have written a secret back out), then held within its caps.
 */
export function parseExtraction(templates: ExtractionTemplates, answer: unknown, cwd: string): ExtractionResult {
  const value = answerValue(answer)
  if (value === undefined) return { type: "invalid", reason: "the extractor's answer is not valid JSON" }
  const parsed = answerSchema.safeParse(value)
  if (!parsed.success) {
    return { type: "invalid", reason: `the extractor's answer does not match the schema: ${describeIssues(parsed.error.issues)}` }
  }
  const summary = parsed.data.rollout_summary.trim()
  const raw = parsed.data.raw_memory.trim()
  if (!summary || !raw) return { type: "empty" }
  const echo = findEcho(templates, `${summary}\n${raw}`)
  if (echo) return { type: "invalid", reason: `the extractor echoed its instructions ("${echo.slice(0, 60)}...")` }
  const safeSummary = redact(summary)
  const safeRaw = redact(raw)
  // The slug becomes part of a file name: a secret in it is redacted before cleanSlug mangles it.
  const safeSlug = parsed.data.rollout_slug == null ? undefined : redact(parsed.data.rollout_slug)
  const counts: Record<string, number> = { ...safeSummary.counts }
  for (const [key, n] of [...Object.entries(safeRaw.counts), ...Object.entries(safeSlug?.counts ?? {})]) counts[key] = (counts[key] ?? 0) + n
  // Redacted before the cut, so that no secret is cut in half and missed.
  const capped = capRecord(safeRaw.text, safeSummary.text)
  return {
    type: "memory",
    memory: { rawMemory: capped.rawMemory, rolloutSummary: capped.rolloutSummary, slug: cleanSlug(safeSlug?.text ?? null), cwd: cwd ? path.normalize(cwd) : null },
    redactions: counts,
    cuts: capped.cuts,
  }
}

/** Lowercase letters, digits and dashes, at most SLUG_MAX; null when nothing usable is left. */
export function cleanSlug(slug: string | null | undefined): string | null {
  const clean = (slug ?? "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, SLUG_MAX)
    .replace(/-+$/, "")
  return clean || null
}

/** Line breaks and runs of spaces as single spaces, so a re-wrapped echo is still found. */
function collapseSpace(text: string): string {
  return text.replace(/\s+/g, " ")
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
