// Codex's ad-hoc note case (ext/memories/src/tests.rs, ad hoc note creation) writes a file that
// holds exactly the note. Ours adds a heading and a provenance line above it (recorded in
// codex-map.yaml under src/backend/notes.ts); everything after them is the note, byte for byte.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { addNote } from "../../src/backend/notes.js"
import { redact } from "../../src/redact/redact.js"

describe("an ad-hoc note's file", () => {
  const roots: string[] = []
  afterEach(() => {
    for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true })
  })

  it("holds a heading, one provenance line, then exactly the note", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-note-"))
    roots.push(root)
    const note = "Always run the linter before pushing.\n\n- even for docs"
    const written = addNote({ root, now: () => new Date("2026-01-02T03:04:05Z"), redact }, { title: "Lint first", note, sessionId: "ses_a" })
    const [heading, blank, provenance, gap, ...rest] = fs.readFileSync(path.join(root, written.path), "utf8").split("\n")
    expect([heading, blank, provenance, gap]).toEqual(["# Lint first", "", "Noted 2026-01-02T03:04:05.000Z in session ses_a, at the user's request.", ""])
    expect(rest.join("\n")).toBe(`${note}\n`)
  })
})
