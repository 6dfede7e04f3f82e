// codex-map.yaml as a contract: one schema (js-yaml reads it, zod checks it) shared by the unit
// test that keeps the map complete and by the maintainers' drift check (check-codex-drift.ts).
//
//   codex_repo: openai/codex
//   codex_ref: <sha>              the Codex commit last audited
//   codex_ref_date: YYYY-MM-DD
//   watch_paths: [...]            upstream paths or globs whose changes no single file owns
//   files:
//     <project path or folder/>:
//       codex: [codex-rs/...]     the Codex sources it follows (paths or folders ending in /)
//       host_only: true           instead, for host-specific files with no Codex counterpart
//       watch_paths: [...]        more upstream paths or globs whose changes matter to it
//       codex_ref: <sha>          when this file was audited at another commit
//       note: ...                 context, and every deliberate divergence from Codex
import fs from "node:fs"
import path from "node:path"
import { load } from "js-yaml"
import { z, type Infer } from "../src/util/zod.js"

// A SHA of digits only, or digits around one "e", reads as a number in YAML: it must be quoted.
const sha = z.string({ error: (issue) => (typeof issue.input === "number" ? "a commit SHA that YAML reads as a number; put it in quotes" : "expected a commit SHA") }).regex(/^[0-9a-f]{7,40}$/, "expected a commit SHA (7 to 40 hex digits)")
/** A path in the Codex repository, relative, with no `..` and no leading slash; globs may use `*`, `**`, `?`. */
const upstreamPath = z
  .string()
  .min(1)
  .refine((value) => !value.startsWith("/") && !value.split("/").includes(".."), "expected a path relative to the Codex repository")

const entry = z
  .strictObject({
    codex: z.array(upstreamPath).min(1).optional(),
    host_only: z.literal(true).optional(),
    watch_paths: z.array(upstreamPath).min(1).optional(),
    codex_ref: sha.optional(),
    note: z.string().min(1).optional(),
  })
  .refine((value) => (value.codex !== undefined) !== (value.host_only === true), "needs either codex: [...] or host_only: true, not both")

const schema = z.strictObject({
  codex_repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'expected "owner/name"'),
  codex_ref: sha,
  codex_ref_date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "expected YYYY-MM-DD"),
  watch_paths: z.array(upstreamPath).optional(),
  files: z.record(z.string().min(1), entry),
})

export type CodexMap = Infer<typeof schema>
export type MapEntry = Infer<typeof entry>

export type MapResult = { ok: true; map: CodexMap } | { ok: false; problems: string[] }

/** Parses and checks the map's text; every problem is named with its place in the file. */
export function parseCodexMap(text: string): MapResult {
  let value: unknown
  try {
    value = load(text)
  } catch (error) {
    return { ok: false, problems: [`not valid YAML: ${(error as Error).message.split("\n")[0]}`] }
  }
  const parsed = schema.safeParse(value)
  if (parsed.success) return { ok: true, map: parsed.data }
  return { ok: false, problems: parsed.error.issues.map((issue) => `${issue.path.map(String).join(".") || "(top)"}: ${issue.message}`) }
}

export function readCodexMap(file: string): MapResult {
  let text: string
  try {
    text = fs.readFileSync(file, "utf8")
  } catch (error) {
    return { ok: false, problems: [`cannot read ${file}: ${(error as Error).message}`] }
  }
  return parseCodexMap(text)
}

/** The map key that covers a project file: its own entry, else the deepest folder entry above it. */
export function coveringKey(file: string, keys: readonly string[]): string | undefined {
  if (keys.includes(file)) return file
  return keys.filter((key) => key.endsWith("/") && file.startsWith(key)).sort((a, b) => b.length - a.length)[0]
}

/** Project files without an entry, and entries naming nothing that exists (folder keys must be folders). */
export function coverageProblems(files: readonly string[], keys: readonly string[], kindOf: (key: string) => "file" | "folder" | undefined): string[] {
  const problems = files.filter((file) => coveringKey(file, keys) === undefined).map((file) => `${file}: no entry`)
  for (const key of keys) {
    const kind = kindOf(key.replace(/\/$/, ""))
    if (kind === undefined) problems.push(`${key}: names nothing that exists`)
    else if (key.endsWith("/") !== (kind === "folder")) problems.push(`${key}: is a ${kind}`)
  }
  return problems
}

/**
 * Whether an upstream path falls under a map pattern: a file path matches itself, a folder path
 * (ending in /) everything below it, and a glob (`*` within a name, `**` across folders, `?`)
 * what it spells.
 */
export function matchesPattern(pattern: string, file: string): boolean {
  if (!/[*?]/.test(pattern)) return pattern.endsWith("/") ? file.startsWith(pattern) : file === pattern
  const source = pattern
    .split(/(\*\*\/?|\*|\?)/)
    .map((part) => (part === "**" || part === "**/" ? "(?:.*/)?" + (part === "**" ? ".*" : "") : part === "*" ? "[^/]*" : part === "?" ? "[^/]" : part.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
    .join("")
  return new RegExp(`^${source}${pattern.endsWith("/") ? ".*" : ""}$`).test(file)
}

/** The project's root: the folder holding codex-map.yaml, from scripts/ or dist/scripts/. */
export function projectRoot(from: string): string {
  let dir = from
  while (!fs.existsSync(path.join(dir, "codex-map.yaml"))) {
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error("codex-map.yaml not found above the script")
    dir = parent
  }
  return dir
}
