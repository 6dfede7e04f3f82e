// view, view --all and recall: what memory holds, as injected, as stored, and for one session.
import { readMemoryFile } from "../../backend/read.js"
import { redactText } from "../../redact/redact.js"
import type { CitationReceipt } from "../../store/memory-store.js"
import type { RecordRow } from "../../store/version-store.js"
import { intFlag } from "../args.js"
import type { Command } from "../command.js"
import { CliError } from "../errors.js"
import { withHome } from "../home.js"

const PAGE_DEFAULT = 50
const PAGE_MAX = 500

export const viewCommand: Command = {
  name: "view",
  usage: "view [--all [--limit N] [--offset N]] [--version v1|v2] [--home DIR] [--text]",
  summary: "the memory block as it is injected; --all: every stored record, paged",
  flags: { all: { type: "boolean" }, limit: { type: "string" }, offset: { type: "string" }, version: { type: "string" } },
  positionals: { min: 0, max: 0 },
  async run({ cli, args }) {
    // Flags first: a bad one is a usage error whatever the home.
    const limit = intFlag(args.values.limit, "limit", PAGE_DEFAULT, 1, PAGE_MAX)
    const offset = intFlag(args.values.offset, "offset", 0, 0, Number.MAX_SAFE_INTEGER)
    return withHome(cli, args.values.home as string | undefined, async (home) => {
      const version = versionFlag(args.values.version, home.memory.options.version)
      const pipeline = home.memory.pipeline(version)
      if (!args.values.all) {
        // Exactly what a conversation's model call would get: the read path's own bytes.
        const block = pipeline.readPath.blockFor({ sessionID: "cli", system: [] })
        return { json: { version, summary_file: pipeline.paths.summary, injected: block !== undefined, block: block ?? null }, text: block ?? `nothing is injected: ${pipeline.paths.summary} does not exist yet` }
      }
      const rows = pipeline.store()?.records(offset, limit + 1) ?? []
      const records = rows.slice(0, limit).map(recordJson)
      const next = rows.length > limit ? offset + limit : null
      const text = records.map((r) => `## ${r.session_id} (${r.updated_at}, used ${r.usage_count}x${r.consolidated ? ", consolidated" : ""})\n${r.rollout_summary}`).join("\n\n") || "no records"
      return { json: { version, offset, limit, records, next_offset: next }, text: next === null ? text : `${text}\n\n(more: --offset ${next})` }
    })
  },
}

export const recallCommand: Command = {
  name: "recall",
  usage: "recall SESSION_ID [--home DIR] [--text]",
  summary: "one session's extraction, redaction counts, consolidation and cited usage",
  flags: {},
  positionals: { min: 1, max: 1 },
  async run({ cli, args }) {
    const sessionId = args.positionals[0]!
    return withHome(cli, args.values.home as string | undefined, async (home) => {
      const { memory } = home
      const versions = [...memory.pipelines.values()].map((pipeline) => {
        const store = pipeline.store()
        const phase2 = store?.phase2Job()
        return {
          version: pipeline.version,
          records: (store?.recordsOf(sessionId) ?? []).map(recordJson),
          jobs: (store?.jobsOf(sessionId) ?? []).map((job) => ({ kind: job.kind, key: job.job_key, status: job.status, last_error: job.last_error })),
          last_consolidation: phase2?.last_success_at ? new Date(phase2.last_success_at).toISOString() : null,
        }
      })
      const catalog = memory.store()
      const readsVersion = catalog?.stampedVersion(sessionId) ?? null
      // Headings come from the folder the session reads, as it stands now (a file may have changed since).
      const root = (memory.pipelines.get(readsVersion ?? memory.options.version) ?? memory.pipeline(memory.options.version))?.readableRoot()
      const json = {
        session_id: sessionId,
        mode: catalog?.mode(sessionId) ?? "enabled",
        reads_version: readsVersion,
        redactions: catalog?.redactionsOf(sessionId) ?? {},
        versions,
        cited: (catalog?.receiptsOf(sessionId) ?? []).map((receipt) => citedJson(root, receipt)),
      }
      // A session kept out or forgotten is known, with nothing learned: that is the answer, not an error.
      if (versions.every((v) => v.records.length === 0 && v.jobs.length === 0) && !catalog?.knows(sessionId)) throw new CliError("not_found", `no record or job of session ${sessionId} in ${home.paths.home}`)
      const text = versions
        .flatMap((v) => v.records.map((r) => `## ${v.version} ${r.session_id}\nupdated ${r.updated_at}; used ${r.usage_count}x (last ${r.last_usage ?? "never"}); ${r.consolidated ? `consolidated (last consolidation ${v.last_consolidation})` : "not consolidated yet"}\n\n${r.rollout_summary}\n\n${r.raw_memory}`))
        .join("\n\n")
      return { json, text: `${text}\n\n${citedText(json.cited)}\n\nmode: ${json.mode}; redactions: ${JSON.stringify(json.redactions)}` }
    })
  },
}

/** The first line a citation points at, cut to this many characters. */
const HEADING_MAX = 120

/** One receipt as recall prints it: the path redacted again, and the cited range's first line when the safe read path can give it. */
function citedJson(root: string | undefined, receipt: CitationReceipt) {
  return {
    path: redactText(receipt.path),
    start_line: receipt.start,
    end_line: receipt.end,
    count: receipt.count,
    last_cited: new Date(receipt.lastAt).toISOString(),
    heading: headingOf(root, receipt),
  }
}

/** The cited range's first non-blank line, redacted by memory_read's own path checks and redaction; null when it cannot be read. */
function headingOf(root: string | undefined, receipt: CitationReceipt): string | null {
  if (root === undefined || receipt.path !== redactText(receipt.path)) return null
  try {
    const read = readMemoryFile(root, { path: receipt.path, line_offset: Math.max(1, receipt.start), max_lines: Math.max(1, Math.min(5, receipt.end - receipt.start + 1)) })
    const line = read.content.split("\n").map((l) => l.trim()).find((l) => l.length > 0)
    if (!line) return null
    return line.length > HEADING_MAX ? `${line.slice(0, HEADING_MAX - 1)}…` : line
  } catch {
    return null
  }
}

function citedText(cited: ReadonlyArray<ReturnType<typeof citedJson>>): string {
  if (cited.length === 0) return "cited memory: no reply of this session cited memory"
  const lines = cited.map((c) => `- ${c.path}:${c.start_line}-${c.end_line}${c.heading ? ` (${c.heading})` : ""}: cited ${c.count}x, last ${c.last_cited}`)
  return `cited memory:\n${lines.join("\n")}`
}

/** A record as the commands print it: redacted again, as every answer that quotes memory is (backend/search.ts). */
function recordJson(row: RecordRow) {
  return {
    session_id: row.session_id,
    updated_at: new Date(Number(row.source_updated_at)).toISOString(),
    slug: row.rollout_slug === null ? null : redactText(row.rollout_slug),
    cwd: row.cwd === null ? null : redactText(row.cwd),
    rollout_summary: redactText(row.rollout_summary),
    raw_memory: redactText(row.raw_memory),
    usage_count: Number(row.usage_count),
    last_usage: row.last_usage === null ? null : new Date(Number(row.last_usage)).toISOString(),
    consolidated: Number(row.selected_for_phase2) === 1,
    generated_at: new Date(Number(row.generated_at)).toISOString(),
  }
}

export function versionFlag(value: string | boolean | undefined, fallback: "v1" | "v2"): "v1" | "v2" {
  if (value === undefined) return fallback
  if (value === "v1" || value === "v2") return value
  throw new CliError("usage", `--version must be v1 or v2; got ${JSON.stringify(value)}`)
}
