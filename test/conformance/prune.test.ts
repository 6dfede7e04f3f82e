// Codex's extension cases, run against our workspace. Sources (the openai/codex index holds neither
// prune.rs nor its tests): zomem/codex codex-rs/memories/write/src/extensions/prune.rs and
// prune_tests.rs at ba211eaad36c714e052b8ffc75b1da9218b0b113 (BLamy/codex b424ccc7 has the same
// rule), and ad_hoc_tests.rs at the same commit.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { nameTimestamp } from "../../src/backend/timestamps.js"
import { prepareWorkspace, syncInputs } from "../../src/write/phase2/workspace.js"

const templatesDir = fileURLToPath(new URL("../../templates", import.meta.url))
/** prune_tests.rs's "now": 2026-04-14T12-00-00 UTC. */
const NOW = Date.UTC(2026, 3, 14, 12, 0, 0)

function memoryRoot(): string {
  const root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-prune-")), "memories")
  fs.mkdirSync(root)
  return root
}

function write(root: string, relative: string, text = "resource"): string {
  const file = path.join(root, relative)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
  return file
}

describe("extension resource pruning (Codex prune_tests.rs)", () => {
  // prunes_only_old_resources_from_extensions_with_instructions, without its exact-cutoff file
  // (the next case)
  it("prunes only old time-stamped resources, and only of extensions with instructions", async () => {
    const root = memoryRoot()
    write(root, "extensions/chronicle/instructions.md", "instructions")
    const old = write(root, "extensions/chronicle/resources/2026-04-06T11-59-59-abcd-10min-old.md")
    const recent = write(root, "extensions/chronicle/resources/2026-04-08T12-00-00-abcd-10min-recent.md")
    const invalid = write(root, "extensions/chronicle/resources/not-a-timestamp.md")
    const ignored = write(root, "extensions/ignored/resources/2026-04-06T11-59-59-abcd-10min-old.md", "ignored")
    const result = await syncInputs(root, [], { now: () => NOW })
    expect(fs.existsSync(old)).toBe(false)
    expect([recent, invalid, ignored].map((file) => fs.existsSync(file))).toEqual([true, true, true])
    expect(result.prunedResources).toBe(1)
  })

  // Codex keeps only `timestamp > now - 7 days`: a resource exactly at the cutoff goes.
  it("prunes a resource exactly seven days old", async () => {
    const root = memoryRoot()
    write(root, "extensions/chronicle/instructions.md", "instructions")
    const cutoff = write(root, "extensions/chronicle/resources/2026-04-07T12-00-00-abcd-10min-cutoff.md")
    await syncInputs(root, [], { now: () => NOW })
    expect(fs.existsSync(cutoff)).toBe(false)
  })

  // Codex's rule, from prune.rs: only flat `.md` files are candidates; a sub-folder's files and
  // other extensions are left alone (this is what keeps ad_hoc/notes and imported projects).
  it("leaves nested resources, non-Markdown files and notes alone", async () => {
    const root = memoryRoot()
    write(root, "extensions/chronicle/instructions.md", "instructions")
    const nested = write(root, "extensions/chronicle/resources/project/2026-04-01T00-00-00-old.md")
    const text = write(root, "extensions/chronicle/resources/2026-04-01T00-00-00-old.txt")
    write(root, "extensions/ad_hoc/instructions.md", "instructions")
    const note = write(root, "extensions/ad_hoc/notes/2026-04-01T00-00-00-remember.md")
    await syncInputs(root, [], { now: () => NOW })
    expect([nested, text, note].map((file) => fs.existsSync(file))).toEqual([true, true, true])
  })

  // parses_timestamp_prefix_from_resource_file_name: 1_775_476_799 s (ours in milliseconds)
  it("reads the UTC time a resource's name starts with, and nothing from a name without one", () => {
    expect(nameTimestamp("2026-04-06T11-59-59-abcd-10min-old.md")).toBe(1_775_476_799_000)
    expect(nameTimestamp("not-a-timestamp.md")).toBeUndefined()
  })
})

describe("ad-hoc extension seeding (Codex ad_hoc_tests.rs)", () => {
  // seeds_instructions_without_overwriting_existing_file
  it("seeds the ad-hoc instructions once and never overwrites the user's edit", async () => {
    const root = memoryRoot()
    const now = () => NOW
    const instructions = path.join(root, "extensions/ad_hoc/instructions.md")
    await prepareWorkspace(root, { templatesDir, now })
    expect(fs.readFileSync(instructions, "utf8")).toBe(fs.readFileSync(path.join(templatesDir, "extensions/ad_hoc/instructions.md"), "utf8"))
    fs.writeFileSync(instructions, "custom instructions")
    await prepareWorkspace(root, { templatesDir, now })
    expect(fs.readFileSync(instructions, "utf8")).toBe("custom instructions")
  })
})
