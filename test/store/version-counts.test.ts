import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { describe, expect, it } from "vitest"
import { openDatabase } from "../../src/store/database.js"
import { VersionStore } from "../../src/store/version-store.js"

describe("a version's counts", () => {
  it("count the records no consolidation has taken in, or that changed since one did", () => {
    const { db } = openDatabase(path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocm-counts-")), "memory.db"))
    try {
      const insert = db.prepare(
        `INSERT INTO stage1_outputs (session_id, source_updated_at, raw_memory, rollout_summary, rollout_slug, cwd, generated_at, selected_for_phase2, selected_for_phase2_source_updated_at)
         VALUES ($id, $at, 'raw', 'summary', 'slug', '/work', $at, $selected, $selectedAt)`,
      )
      insert.run({ id: "ses_new", at: 10, selected: 0, selectedAt: null })
      insert.run({ id: "ses_taken", at: 20, selected: 1, selectedAt: 20 })
      insert.run({ id: "ses_changed", at: 30, selected: 1, selectedAt: 25 })
      expect(new VersionStore("v1", db).counts()).toMatchObject({ outputs: 3, unconsolidated: 2, forgetting: 0 })
    } finally {
      db.close()
    }
  })
})
