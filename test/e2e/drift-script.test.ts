// scripts/check-codex-drift.sh as maintainers run it: the shell entry over the built script, its
// exit codes and its JSON, against a small Codex-like repository made with the git binary.
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "./support/opencode.js"

const script = path.join(repoRoot(), "scripts", "check-codex-drift.sh")

function codexLikeRepo(): { repo: string; map: string; change: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-drift-sh-"))
  const repo = path.join(dir, "codex")
  const git = (...args: string[]) => spawnSync("git", ["-C", repo, ...args], { encoding: "utf8" })
  fs.mkdirSync(path.join(repo, "codex-rs", "memories"), { recursive: true })
  git("init", "-q")
  git("config", "user.email", "t@example.com")
  git("config", "user.name", "T")
  fs.writeFileSync(path.join(repo, "codex-rs", "memories", "phase2.rs"), "fn a() {}\n")
  git("add", "-A")
  git("commit", "-q", "-m", "base")
  const base = git("rev-parse", "HEAD").stdout.trim()
  const map = path.join(dir, "codex-map.yaml")
  fs.writeFileSync(map, `codex_repo: openai/codex\ncodex_ref: ${base}\ncodex_ref_date: 2026-07-30\nfiles:\n  src/write/phase2/phase2.ts:\n    codex:\n      - codex-rs/memories/phase2.rs\n`)
  return {
    repo,
    map,
    change: () => {
      fs.writeFileSync(path.join(repo, "codex-rs", "memories", "phase2.rs"), "fn a() {}\nfn b() {}\n")
      git("commit", "-q", "-am", "change")
    },
  }
}

const run = (args: string[], env: Record<string, string | undefined>) =>
  spawnSync("bash", [script, ...args], { encoding: "utf8", env: { PATH: process.env.PATH, ...env } as NodeJS.ProcessEnv })

describe("scripts/check-codex-drift.sh", () => {
  it("exits 0 aligned, 1 on drift with a JSON report, and 2 without CODEX_REPO", () => {
    const { repo, map, change } = codexLikeRepo()
    expect(run(["--map", map], { CODEX_REPO: repo }).status).toBe(0)
    change()
    const drift = run(["--map", map, "--json"], { CODEX_REPO: repo })
    expect(drift.status).toBe(1)
    expect(JSON.parse(drift.stdout)).toMatchObject({ aligned: false, files: [{ file: "src/write/phase2/phase2.ts", changed: [{ path: "codex-rs/memories/phase2.rs", added: 1, deleted: 0 }] }] })
    const unset = run(["--map", map], {})
    expect(unset.status).toBe(2)
    expect(unset.stderr).toContain("CODEX_REPO is not set")
    expect(run(["--map", map, "stray"], { CODEX_REPO: repo }).status).toBe(2)
  })
})
