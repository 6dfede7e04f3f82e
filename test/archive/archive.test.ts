import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { ArchiveError, type ArchiveErrorCode } from "../../src/archive/errors.js"
import { exportHome } from "../../src/archive/export.js"
import { ARCHIVE_MAX_BYTES, ARCHIVED_VERSIONS, archiveChecksum, archivePathProblem, canonicalJson, sha256Hex, type Archive } from "../../src/archive/format.js"
import { importArchive } from "../../src/archive/import.js"
import { swapEntries } from "../../src/archive/swap.js"
import { JOBS } from "../../src/constants.js"
import { openDatabase } from "../../src/store/database.js"
import { leaseBoot } from "../../src/store/lease-owner.js"
import { MIGRATIONS, V2_MIGRATIONS } from "../../src/store/migrations.js"
import type { SqlDatabase } from "../../src/store/sqlite.js"
import { memoryPaths } from "../../src/util/paths.js"
import { rowsOf, snapshot } from "./home-files.js"

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0)
const now = () => NOW
const HOUR = 60 * 60 * 1000
const BINARY = Buffer.from([0xff, 0x00, 0xfe, 0x80, 0x41, 0xc3])

const made: string[] = []
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

function tmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-archive-"))
  made.push(dir)
  return dir
}

function withDb<T>(file: string, migrations: typeof MIGRATIONS, fn: (db: SqlDatabase) => T): T {
  const { db } = openDatabase(file, { migrations })
  try {
    return fn(db)
  } finally {
    db.close()
  }
}

function write(file: string, content: string | Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, content)
}

/** A home as the plugin leaves it: both databases, both folders, git baselines, a symlink. */
function buildHome(options: { v2?: boolean } = {}): string {
  const home = path.join(tmp(), "home")
  withDb(path.join(home, "memory.db"), MIGRATIONS, (db) => {
    db.prepare("INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ($id, $mode, $at)").run({ id: "ses_a", mode: "enabled", at: NOW - 5 })
    db.prepare("INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ($id, $mode, $at)").run({ id: "ses_b", mode: "polluted", at: NOW - 4 })
    db.prepare(
      `INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, rollout_slug, cwd, generated_at, usage_count)
       VALUES ($id, $at, $raw, $summary, $slug, $cwd, $at, 2)`,
    ).run({ id: "ses_a", at: NOW - HOUR, raw: "raw memory with ünïcode ✓", summary: "summary", slug: "x", cwd: "/srv/example-project" })
    db.prepare(
      `INSERT INTO jobs (kind, job_key, status, worker_id, ownership_token, started_at, lease_until, retry_remaining, owner_pid, owner_boot)
       VALUES ($kind, 'ses_b', 'running', 'worker-1', 'token-1', $at, $lease, 3, 4242, 'another-machine')`,
    ).run({ kind: JOBS.STAGE1, at: NOW - 1000, lease: NOW + HOUR })
    db.prepare(
      `INSERT INTO jobs (kind, job_key, status, finished_at, last_success_at, retry_remaining) VALUES ($kind, $key, 'done', $at, $at, 3)`,
    ).run({ kind: JOBS.PHASE2, key: JOBS.PHASE2_KEY, at: NOW - 2 * HOUR })
    db.prepare("INSERT INTO cited_files (path, usage_count, last_usage, last_range) VALUES ('MEMORY.md', 3, $at, '1-4')").run({ at: NOW - 7 })
    // A BLOB in a TEXT column: SQLite keeps it as a BLOB, and so must the archive.
    db.prepare("INSERT INTO cited_files (path, usage_count, last_usage, last_range) VALUES ('blob.md', 1, $at, $range)").run({ at: NOW - 6, range: BINARY })
    db.prepare("INSERT INTO redaction_log (id, session_id, stage, recorded_at, counts) VALUES (7, 'ses_a', 'transcript', $at, '{\"github-token\":2}')").run({ at: NOW - 3 })
  })
  if (options.v2 !== false) {
    withDb(path.join(home, "memory_v2.db"), V2_MIGRATIONS, (db) => {
      db.prepare(
        `INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, generated_at) VALUES ('ses_v2', $at, 'v2 raw', 'v2 summary', $at)`,
      ).run({ at: NOW - HOUR })
      db.prepare("INSERT INTO consolidation_progress (id, max_session_count, updated_at) VALUES (1, 12, $at)").run({ at: NOW - HOUR })
    })
    write(path.join(home, "memories_v2", "MEMORY.md"), "# V2 memory\n")
  }
  const memories = path.join(home, "memories")
  write(path.join(memories, "MEMORY.md"), "# Memory\n\n- a fact ✓\n")
  write(path.join(memories, "memory_summary.md"), "summary\n")
  write(path.join(memories, "rollout_summaries", "x.md"), "rollout x\n")
  write(path.join(memories, "blob.bin"), BINARY)
  write(path.join(memories, ".git", "HEAD"), "ref: refs/heads/main\n")
  write(path.join(memories, ".git-baseline-next", "HEAD"), "ref: refs/heads/main\n")
  const outside = path.join(path.dirname(home), "outside.md")
  write(outside, "not memory\n")
  fs.symlinkSync(outside, path.join(memories, "link.md"))
  return home
}


/** Edits a parsed archive and seals it again, so only the edit itself can be what is refused. */
function reseal(text: string, edit: (archive: Archive) => void): string {
  const archive = JSON.parse(text) as Archive
  edit(archive)
  archive.checksum = archiveChecksum(archive)
  return JSON.stringify(archive)
}

function refusal(fn: () => unknown): ArchiveError {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(ArchiveError)
    return error as ArchiveError
  }
  throw new Error("expected an ArchiveError")
}

/** Refused with `code`, and the home is exactly as it was, with no staging or backup folder left. */
function expectRefused(text: string | Buffer, home: string, code: ArchiveErrorCode, options: { replace?: boolean } = {}): ArchiveError {
  const before = snapshot(home)
  const error = refusal(() => importArchive(text, home, { ...options, now }))
  expect(error.code, error.message).toBe(code)
  expect(snapshot(home)).toEqual(before)
  return error
}

const firstFile = (archive: Archive, name: string) => {
  const file = archive.files.find((item) => item.path === name)
  if (!file) throw new Error(`no ${name} in the archive`)
  return file
}

/** The rows the import must produce from a home's rows: running jobs pending, their leases gone. */
function released(rows: Record<string, Record<string, unknown>[]>): Record<string, Record<string, unknown>[]> {
  const jobs = rows.jobs?.map((job) =>
    job.status === "running" ? { ...job, status: "pending", ownership_token: null, lease_until: null, owner_pid: null, owner_boot: null } : job,
  )
  return jobs ? { ...rows, jobs } : rows
}

describe("export and import", () => {
  it("carries every row and every regular file to an empty home, leaving git folders and symlinks behind", () => {
    const home = buildHome()
    const exported = exportHome(home, { now })
    expect(exported.skipped).toEqual(["memories/link.md: a symlink, not followed"])
    expect(exported.summary.files).toBe(5)
    expect(exported.summary.bytes).toBe(
      [["memories", "MEMORY.md"], ["memories", "memory_summary.md"], ["memories", "rollout_summaries", "x.md"], ["memories", "blob.bin"], ["memories_v2", "MEMORY.md"]]
        .map((parts) => fs.statSync(path.join(home, ...parts)).size)
        .reduce((a, b) => a + b, 0),
    )
    expect(exported.summary.tables).toMatchObject({ "memory.db/session_meta": 2, "memory.db/jobs": 2, "memory.db/cited_files": 2, "memory.db/session_checkpoints": 0, "memory_v2.db/consolidation_progress": 1 })

    const archive = JSON.parse(exported.archive) as Archive
    expect(archive).toMatchObject({ format: "opencode-codex-memory-archive", archive_version: 1, created_at: new Date(NOW).toISOString() })
    expect(archive.schema).toEqual({ catalog: MIGRATIONS.length, v2: V2_MIGRATIONS.length })
    // Every table the migrations made, discovered rather than listed.
    expect(Object.keys(archive.databases["memory.db"].tables)).toEqual(Object.keys(rowsOf(path.join(home, "memory.db"))))
    expect(Object.keys(archive.databases["memory.db"].tables)).toEqual(
      expect.arrayContaining(["cited_files", "citation_parts", "jobs", "memory_session_versions", "redaction_log", "session_checkpoints", "session_meta", "stage1_outputs"]),
    )
    expect(Object.keys(archive.databases["memory_v2.db"]!.tables)).toEqual(["consolidated_sessions", "consolidation_progress", "forget_queue", "jobs", "stage1_outputs"])
    expect(archive.files.map((file) => file.path)).toEqual([
      "memories/MEMORY.md",
      "memories/blob.bin",
      "memories/memory_summary.md",
      "memories/rollout_summaries/x.md",
      "memories_v2/MEMORY.md",
    ].sort())
    expect(firstFile(archive, "memories/MEMORY.md")).toMatchObject({ encoding: "utf8", content: "# Memory\n\n- a fact ✓\n" })
    expect(firstFile(archive, "memories/blob.bin")).toMatchObject({ encoding: "base64", content: BINARY.toString("base64"), sha256: sha256Hex(BINARY) })
    expect(archive.checksum).toBe(archiveChecksum(archive))

    const target = path.join(tmp(), "new-home")
    const imported = importArchive(exported.archive, target, { now })
    expect(imported).toEqual({ files: 5, tables: exported.summary.tables })

    expect(rowsOf(path.join(target, "memory.db"))).toEqual(released(rowsOf(path.join(home, "memory.db"))))
    expect(rowsOf(path.join(target, "memory_v2.db"))).toEqual(rowsOf(path.join(home, "memory_v2.db")))
    const job = rowsOf(path.join(target, "memory.db")).jobs!.find((row) => row.job_key === "ses_b")
    expect(job).toMatchObject({ status: "pending", ownership_token: null, lease_until: null, owner_pid: null, owner_boot: null, worker_id: "worker-1" })
    const blob = rowsOf(path.join(target, "memory.db")).cited_files!.find((row) => row.path === "blob.md")
    // A Buffer from better-sqlite3, a Uint8Array from node:sqlite: the same bytes either way.
    expect(blob?.last_range instanceof Uint8Array && Buffer.from(blob.last_range as Uint8Array).equals(BINARY)).toBe(true)

    for (const name of ["MEMORY.md", "memory_summary.md", "rollout_summaries/x.md", "blob.bin"]) {
      expect(fs.readFileSync(path.join(target, "memories", name)).equals(fs.readFileSync(path.join(home, "memories", name)))).toBe(true)
    }
    expect(fs.readFileSync(path.join(target, "memories_v2", "MEMORY.md"), "utf8")).toBe("# V2 memory\n")
    expect(fs.existsSync(path.join(target, "memories", ".git"))).toBe(false)
    expect(fs.existsSync(path.join(target, "memories", ".git-baseline-next"))).toBe(false)
    expect(fs.lstatSync(path.join(target, "memories", "link.md"), { throwIfNoEntry: false })).toBeUndefined()
    // Nothing but the memory is left in the home: no staging or backup folder.
    expect(fs.readdirSync(target).sort()).toEqual(["memories", "memories_v2", "memory.db", "memory_v2.db"])
  })

  it("exports an imported home as the same archive, but for its time, checksum and released leases", () => {
    const home = buildHome()
    const first = JSON.parse(exportHome(home, { now }).archive) as Archive
    const second = path.join(tmp(), "second")
    importArchive(JSON.stringify(first), second, { now })
    const again = JSON.parse(exportHome(second, { now: () => NOW + 1000 }).archive) as Archive
    expect(again.created_at).toBe(new Date(NOW + 1000).toISOString())

    const jobs = first.databases["memory.db"].tables.jobs!
    const status = jobs.columns.indexOf("status")
    const cleared = ["ownership_token", "lease_until", "owner_pid", "owner_boot"].map((column) => jobs.columns.indexOf(column))
    const expected = structuredClone(first)
    for (const row of expected.databases["memory.db"].tables.jobs!.rows) {
      if (row[status] !== "running") continue
      row[status] = "pending"
      for (const index of cleared) row[index] = null
    }
    const { created_at: _a, checksum: _b, ...body } = again
    const { created_at: _c, checksum: _d, ...expectedBody } = expected
    expect(body).toEqual(expectedBody)

    // From then on the round trip is exact.
    const third = path.join(tmp(), "third")
    importArchive(JSON.stringify(again), third, { now })
    const last = JSON.parse(exportHome(third, { now: () => NOW + 1000 }).archive) as Archive
    expect(last).toEqual(again)
  })

  it("accepts the archive as bytes, with a byte-order mark, and in any key order or spacing", () => {
    const home = buildHome()
    const archive = JSON.parse(exportHome(home, { now }).archive) as Archive
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(archive).reverse()), null, 2)
    const target = path.join(tmp(), "target")
    expect(importArchive(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(reordered)]), target, { now }).files).toBe(5)
  })

  it("exports a home without memory_v2.db without it, and the import creates none", () => {
    const home = buildHome({ v2: false })
    const exported = exportHome(home, { now })
    const archive = JSON.parse(exported.archive) as Archive
    expect(Object.keys(archive.databases)).toEqual(["memory.db"])
    expect(Object.keys(exported.summary.tables).some((key) => key.startsWith("memory_v2.db/"))).toBe(false)
    expect(fs.existsSync(path.join(home, "memory_v2.db"))).toBe(false)

    const target = path.join(tmp(), "target")
    importArchive(exported.archive, target, { now })
    expect(fs.existsSync(path.join(target, "memory.db"))).toBe(true)
    expect(fs.existsSync(path.join(target, "memory_v2.db"))).toBe(false)
    expect(fs.existsSync(path.join(target, "memories_v2"))).toBe(false)
  })

  it("exports a home with folders but no memory.db as memory.db's empty tables, creating no database", () => {
    const home = path.join(tmp(), "home")
    write(path.join(home, "memories", "MEMORY.md"), "# Memory\n")
    const archive = JSON.parse(exportHome(home, { now }).archive) as Archive
    expect(archive.databases["memory.db"].tables.jobs).toMatchObject({ rows: [] })
    expect(archive.databases["memory.db"].tables.jobs!.columns).toContain("owner_boot")
    expect(fs.readdirSync(home)).toEqual(["memories"])
  })

  it("refuses to export a folder that holds no memory", () => {
    const home = tmp()
    expect(refusal(() => exportHome(home, { now })).code).toBe("no_home")
    expect(refusal(() => exportHome(path.join(home, "missing"), { now })).code).toBe("no_home")
    expect(fs.readdirSync(home)).toEqual([])
  })

  it("refuses to export an archive too large to import", () => {
    const home = buildHome()
    write(path.join(home, "memories", "huge.md"), "x".repeat(ARCHIVE_MAX_BYTES))
    const error = refusal(() => exportHome(home, { now }))
    expect(error.code).toBe("too_large")
    expect(error.message).toContain("memories/huge.md")
  })

  it("refuses to export when the encoded archive, not the files alone, passes the limit", () => {
    const home = buildHome()
    // Base64 makes these 3.2 MB of bytes about 4.3 MB of archive.
    write(path.join(home, "memories", "big.bin"), Buffer.alloc(3_200_000, 0xff))
    expect(refusal(() => exportHome(home, { now })).code).toBe("too_large")
  })

  it("imports an archive of an older schema through this build's later migrations", () => {
    const old = MIGRATIONS.slice(0, 2)
    const columns = ["kind", "job_key", "status", "finished_at", "retry_remaining", "last_error"]
    const archive = {
      format: "opencode-codex-memory-archive",
      archive_version: 1,
      created_at: new Date(NOW).toISOString(),
      schema: { catalog: old.length, v2: V2_MIGRATIONS.length },
      databases: { "memory.db": { tables: { jobs: { columns, rows: [[JOBS.PHASE2, JOBS.PHASE2_KEY, "done", NOW - HOUR, 3, null]] } } } },
      files: [],
      checksum: "",
    }
    const target = path.join(tmp(), "target")
    importArchive(reseal(JSON.stringify(archive), () => {}), target, { now })
    // Migration 3 filled last_success_at for rows already done cleanly; the import ran it too.
    expect(rowsOf(path.join(target, "memory.db")).jobs).toMatchObject([{ status: "done", last_success_at: NOW - HOUR }])
    expect(rowsOf(path.join(target, "memory.db")).session_checkpoints).toEqual([])

    // A table the archive's own schema version did not have yet is refused.
    const misfiled = reseal(JSON.stringify(archive), (edit) => {
      edit.databases["memory.db"].tables.session_checkpoints = { columns: ["session_id"], rows: [] }
    })
    expect(expectRefused(misfiled, path.join(tmp(), "other"), "invalid_archive").message).toContain("schema version 2")
  })
})

describe("import into a home that holds memory", () => {
  it("refuses without replace, naming what is there", () => {
    const archive = exportHome(buildHome(), { now }).archive
    const target = buildHome({ v2: false })
    const error = expectRefused(archive, target, "home_not_empty")
    expect(error.message).toContain("memory.db")
    expect(error.message).toContain("--replace")
  })

  it("counts an empty memories folder as empty, and a stray SQLite sidecar as memory", () => {
    const archive = exportHome(buildHome(), { now }).archive
    const empty = tmp()
    fs.mkdirSync(path.join(empty, "memories"))
    expect(importArchive(archive, empty, { now }).files).toBe(5)
    const stray = tmp()
    write(path.join(stray, "memory.db-wal"), "left over")
    expect(expectRefused(archive, stray, "home_not_empty").message).toContain("memory.db-wal")
  })

  it("with replace, puts the archive's memory in place of the old, and the old is gone", () => {
    const archive = exportHome(buildHome({ v2: false }), { now }).archive
    const target = buildHome()
    write(path.join(target, "memories", "old.md"), "old\n")
    withDb(path.join(target, "memory.db"), MIGRATIONS, (db) => {
      db.prepare("INSERT INTO session_meta (session_id, memory_mode, updated_at) VALUES ('ses_old', 'enabled', 1)").run()
    })
    write(path.join(target, "unrelated.txt"), "OpenCode's own file\n")

    importArchive(archive, target, { replace: true, now })
    expect(fs.existsSync(path.join(target, "memories", "old.md"))).toBe(false)
    expect(fs.existsSync(path.join(target, "memories", ".git"))).toBe(false)
    expect(fs.existsSync(path.join(target, "memory_v2.db"))).toBe(false)
    expect(fs.existsSync(path.join(target, "memories_v2"))).toBe(false)
    expect(rowsOf(path.join(target, "memory.db")).session_meta!.map((row) => row.session_id)).toEqual(["ses_a", "ses_b"])
    // Only the memory's own entries are replaced.
    expect(fs.readFileSync(path.join(target, "unrelated.txt"), "utf8")).toBe("OpenCode's own file\n")
    expect(fs.readdirSync(target).filter((name) => name.startsWith(".import-"))).toEqual([])
  })

  it("with replace, refuses while a consolidation holds a live lease, and not once it expired", () => {
    const archive = exportHome(buildHome(), { now }).archive
    for (const version of ARCHIVED_VERSIONS) {
      const target = buildHome()
      const lease = (leaseUntil: number) =>
        withDb(path.join(target, version.database), version.migrations, (db) => {
          db.prepare(
            `INSERT INTO jobs (kind, job_key, status, ownership_token, lease_until, retry_remaining, owner_pid, owner_boot)
             VALUES ($kind, $key, 'running', 'tok', $lease, 3, $pid, $boot)
             ON CONFLICT (kind, job_key) DO UPDATE SET status = 'running', lease_until = $lease, owner_pid = $pid, owner_boot = $boot`,
          ).run({ kind: JOBS.PHASE2, key: JOBS.PHASE2_KEY, lease: leaseUntil, pid: process.pid, boot: leaseBoot() })
        })
      lease(NOW + HOUR)
      expect(expectRefused(archive, target, "consolidation_running", { replace: true }).message).toContain(version.version)
      lease(NOW - 1)
      expect(importArchive(archive, target, { replace: true, now }).files).toBe(5)
    }
  })
})

describe("refusals of a bad archive", () => {
  const exported = () => exportHome(buildHome(), { now }).archive

  it("a truncated archive", () => {
    const text = exported()
    const error = expectRefused(text.slice(0, Math.floor(text.length / 2)), path.join(tmp(), "target"), "invalid_archive")
    expect(error.message).toMatch(/truncated/)
    expect(expectRefused("", path.join(tmp(), "target"), "invalid_archive").message).toMatch(/truncated/)
    // Cut right after a whole value, wherever that lands: still truncated, not "not JSON".
    for (let cut = text.length - 200; cut < text.length - 1; cut++) {
      if (!/[\d"el\]}]/.test(text[cut - 1]!)) continue
      expect(expectRefused(text.slice(0, cut), path.join(tmp(), "target"), "invalid_archive").message).toMatch(/truncated/)
    }
    expect(expectRefused("not json", path.join(tmp(), "target"), "invalid_archive").message).toMatch(/not JSON/)
    expect(expectRefused(Buffer.from([0x7b, 0xff, 0x7d]), path.join(tmp(), "target"), "invalid_archive").message).toMatch(/UTF-8/)
  })

  it("a changed character in a file's content, by its checksum, or when resealed, by the file's sha256", () => {
    const text = exported()
    const archive = JSON.parse(text) as Archive
    const file = firstFile(archive, "memories/MEMORY.md")
    file.content = file.content.replace("fact", "fast")
    const target = tmp()
    expect(expectRefused(JSON.stringify(archive), target, "invalid_archive").message).toMatch(/checksum/)
    const resealed = reseal(text, (edit) => {
      const edited = firstFile(edit, "memories/MEMORY.md")
      edited.content = edited.content.replace("fact", "fast")
    })
    expect(expectRefused(resealed, target, "invalid_archive").message).toContain('"memories/MEMORY.md" does not match its sha256')
  })

  it("a newer archive version or schema, suggesting an upgrade", () => {
    const text = exported()
    const target = tmp()
    const newer = expectRefused(reseal(text, (edit) => Object.assign(edit, { archive_version: 2 })), target, "newer_archive")
    expect(newer.message).toContain("archive version 2")
    expect(newer.message).toMatch(/Upgrade/)
    const catalog = expectRefused(reseal(text, (edit) => (edit.schema.catalog = MIGRATIONS.length + 1)), target, "newer_archive")
    expect(catalog.message).toContain(`memory.db schema ${MIGRATIONS.length + 1}`)
    expect(catalog.message).toContain(`memory.db schema up to ${MIGRATIONS.length}`)
    expect(expectRefused(reseal(text, (edit) => (edit.schema.v2 = 99)), target, "newer_archive").message).toContain("memory_v2.db schema 99")
  })

  it("a file path that leaves the memory folders or enters a git folder", () => {
    const text = exported()
    const target = tmp()
    for (const bad of ["memories/../escape.md", "/etc/passwd", "memories/.git/HEAD", "memories/sub/.GIT/config", "memories//x.md", "memories\\x.md", "other/x.md", "memories", "memories/a\0b"]) {
      const edited = reseal(text, (edit) => {
        const bytes = Buffer.from("payload\n")
        edit.files.push({ path: bad, encoding: "utf8", content: "payload\n", sha256: sha256Hex(bytes) })
      })
      const error = expectRefused(edited, target, "invalid_archive")
      expect(error.message).toContain("path")
      expect(error.message).not.toContain("\0")
    }
    expect(fs.readdirSync(target)).toEqual([])
  })

  it("a file that is also another file's folder, or listed twice", () => {
    const text = exported()
    const target = tmp()
    const add = (name: string) => (edit: Archive) => edit.files.push({ path: name, encoding: "utf8", content: "", sha256: sha256Hex(Buffer.alloc(0)) })
    expect(expectRefused(reseal(text, add("memories/MEMORY.md/inner.md")), target, "invalid_archive").message).toContain("both as a file and as the folder")
    expect(expectRefused(reseal(text, add("memories/MEMORY.md")), target, "invalid_archive").message).toContain("twice")
  })

  it("an unknown table or column, or a row of the wrong length", () => {
    const text = exported()
    const target = tmp()
    const table = expectRefused(
      reseal(text, (edit) => (edit.databases["memory.db"].tables["evil; DROP TABLE jobs"] = { columns: ["x"], rows: [["y"]] })),
      target,
      "invalid_archive",
    )
    expect(table.message).toContain('table "evil; DROP TABLE jobs"')
    const column = reseal(text, (edit) => {
      const meta = edit.databases["memory.db"].tables.session_meta!
      meta.columns[0] = "owner"
    })
    expect(expectRefused(column, target, "invalid_archive").message).toContain('column "owner"')
    const short = reseal(text, (edit) => edit.databases["memory.db"].tables.session_meta!.rows[0]!.pop())
    expect(expectRefused(short, target, "invalid_archive").message).toContain("Row 1 of memory.db/session_meta")
  })

  it("fields of the wrong shape, naming them", () => {
    const text = exported()
    const error = expectRefused(
      reseal(text, (edit) => {
        Object.assign(edit.files[0]!, { encoding: "hex" })
        Object.assign(edit, { extra: true })
      }),
      tmp(),
      "invalid_archive",
    )
    expect(error.message).toContain("files[0].encoding")
    expect(error.message).toContain("extra")
    expect(expectRefused(JSON.stringify({ format: "something-else" }), tmp(), "invalid_archive").message).toContain('"something-else"')
    expect(expectRefused("[1, 2]", tmp(), "invalid_archive").code).toBe("invalid_archive")
  })

  it("an archive over the size limit, before reading it", () => {
    expectRefused("x".repeat(ARCHIVE_MAX_BYTES + 1), tmp(), "too_large")
  })

  it("a row the database refuses while staging, leaving the home as it was and no staging folder", () => {
    const text = reseal(exported(), (edit) => {
      const meta = edit.databases["memory.db"].tables.session_meta!
      meta.rows[1]![meta.columns.indexOf("memory_mode")] = "bogus"
    })
    const empty = tmp()
    const error = expectRefused(text, empty, "invalid_archive")
    expect(error.message).toContain("Row 2 of memory.db/session_meta")
    expect(error.message).toMatch(/CHECK constraint/)
    expect(fs.readdirSync(empty)).toEqual([])

    const full = buildHome()
    expectRefused(text, full, "invalid_archive", { replace: true })
    expect(fs.readdirSync(full).filter((name) => name.startsWith(".import-"))).toEqual([])
  })

  it("a home that does not exist is created only by an import that succeeds", () => {
    const parent = tmp()
    const text = exported()
    expect(refusal(() => importArchive(text.slice(0, 100), path.join(parent, "home"), { now })).code).toBe("invalid_archive")
    const bogus = reseal(text, (edit) => {
      const meta = edit.databases["memory.db"].tables.session_meta!
      meta.rows[0]![meta.columns.indexOf("memory_mode")] = "bogus"
    })
    expect(refusal(() => importArchive(bogus, path.join(parent, "home", "deeper"), { now })).code).toBe("invalid_archive")
    expect(fs.readdirSync(parent)).toEqual([])
  })
})

describe("the swap", () => {
  function staged(): { home: string; staging: string } {
    const home = tmp()
    write(path.join(home, "memory.db"), "old db")
    write(path.join(home, "memories", "MEMORY.md"), "old memory")
    const staging = fs.mkdtempSync(path.join(home, ".import-staging-"))
    write(path.join(staging, "memory.db"), "new db")
    write(path.join(staging, "memories", "MEMORY.md"), "new memory")
    return { home, staging }
  }
  const NAMES = ["memory.db", "memory.db-wal", "memories"]

  it("undoes every rename when one fails, and says nothing changed", () => {
    const { home, staging } = staged()
    const before = snapshot(home)
    let renames = 0
    const error = refusal(() =>
      swapEntries(home, staging, NAMES, {
        rename(from, to) {
          // Both old entries went to the backup and the new memory.db is in place when the fourth fails.
          if (++renames === 4) throw Object.assign(new Error("busy"), { code: "EBUSY" })
          fs.renameSync(from, to)
        },
      }),
    )
    expect(error.code).toBe("io")
    expect(error.message).toContain("nothing was changed")
    const after = snapshot(home)
    expect(Object.fromEntries(Object.entries(after).filter(([name]) => !name.startsWith(".import-")))).toEqual(
      Object.fromEntries(Object.entries(before).filter(([name]) => !name.startsWith(".import-"))),
    )
    expect(fs.readdirSync(home).sort()).toEqual(["memories", "memory.db"])
  })

  it("names the backup folder when it cannot undo", () => {
    const { home, staging } = staged()
    let renames = 0
    const error = refusal(() =>
      swapEntries(home, staging, NAMES, {
        rename(from, to) {
          if (++renames >= 4) throw Object.assign(new Error("gone"), { code: "EIO" })
          fs.renameSync(from, to)
        },
      }),
    )
    expect(error.code).toBe("io")
    const backup = fs.readdirSync(home).find((name) => name.startsWith(".import-backup-"))
    expect(backup).toBeDefined()
    expect(error.message).toContain(path.join(home, backup!))
    expect(fs.readFileSync(path.join(home, backup!, "memory.db"), "utf8")).toBe("old db")
  })
})

describe("the format", () => {
  it("names the databases and folders as memoryPaths does", () => {
    for (const version of ARCHIVED_VERSIONS) {
      const paths = memoryPaths("some-home", "option", version.version)
      expect(path.basename(paths.db)).toBe(version.database)
      expect(path.basename(paths.memoryRoot)).toBe(version.folder)
    }
  })

  it("checks paths as text", () => {
    expect(archivePathProblem("memories/rollout_summaries/x.md")).toBeUndefined()
    expect(archivePathProblem("memories_v2/.hidden.md")).toBeUndefined()
    expect(archivePathProblem("memories/.git-baseline-next/HEAD")).toMatch(/git/)
    expect(archivePathProblem("C:/x")).toMatch(/absolute/)
    expect(archivePathProblem("memories/./x")).toMatch(/"\."/)
  })

  it("has a canonical JSON independent of key order", () => {
    expect(canonicalJson({ b: [1, { d: null, c: "x" }], a: true })).toBe('{"a":true,"b":[1,{"c":"x","d":null}]}')
    expect(archiveChecksum({ b: 1, a: 2, checksum: "ignored" })).toBe(archiveChecksum({ a: 2, b: 1 }))
  })
})
