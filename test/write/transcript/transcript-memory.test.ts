// Peak memory of rendering ~100 MB sessions, measured by scripts/check-transcript-memory.ts in a
// fresh Node per shape (CHILD_FLAGS) (the compiled script: `npm test` builds first).
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { CHILD_FLAGS, TARGET_GROWTH_MB } from "../../../scripts/check-transcript-memory.js"

const script = fileURLToPath(new URL("../../../dist/scripts/check-transcript-memory.js", import.meta.url))

function peakGrowthMB(shape: string): number {
  if (!fs.existsSync(script)) throw new Error(`${script} is missing: run "npm run build" first`)
  const run = spawnSync(process.execPath, [...CHILD_FLAGS, script, shape, "--json"], { encoding: "utf8", timeout: 60_000 })
  const line = run.stdout.trim().split("\n").at(-1) ?? ""
  if (!line.startsWith("{")) throw new Error(`the measurement of ${shape} failed (status ${run.status}):\n${run.stderr}`)
  return (JSON.parse(line) as { peakGrowthMB: number }).peakGrowthMB
}

describe("rendering a 100 MB transcript", () => {
  // Shapes: long tool outputs, long text parts, non-Latin-1 text (two bytes a character in V8),
  // and one 100 MB pasted part (plain and non-Latin-1). The renderer keeps about one budget of
  // text as blocks arrive and cuts a huge part before copying it, so none may grow RSS by a third
  // of its input (32 MB): a render that copied the session even once would.
  for (const shape of ["tools", "text", "unicode", "paste", "paste-unicode"]) {
    it(`keeps peak RSS growth under a third of the 100 MB input: ${shape}`, () => {
      expect(peakGrowthMB(shape)).toBeLessThan(TARGET_GROWTH_MB)
    }, 60_000)
  }
})
