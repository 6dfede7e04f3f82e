// Small timing helpers and the report format. Where a benchmark can, it compares two things
// measured side by side in one run (absolute numbers on a shared machine say little) and prints
// the ratio with its baseline; where the target is an absolute budget, the figure is printed as an
// absolute value next to that budget. See Check.

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** Nanoseconds per call of `fn`, as the median over `rounds` batches of `batch` calls. */
export async function nsPerCall(fn: () => unknown, batch: number, rounds: number): Promise<number> {
  const samples: number[] = []
  for (let round = 0; round < rounds; round++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < batch; i++) {
      const result = fn()
      if (result instanceof Promise) await result
    }
    samples.push(Number(process.hrtime.bigint() - start) / batch)
  }
  return median(samples)
}

/**
 * One figure a benchmark is judged by. Each says what it is, so that no absolute number is
 * printed as a ratio:
 *   - ratio: measured / baseline, where the baseline was measured in the same run and is named;
 *   - absolute: a measured value in its unit, with its target beside it;
 *   - condition: something that must hold for the figures to mean anything (e.g. correct answers).
 */
export type Check =
  | { kind: "ratio"; what: string; ratio: number; baseline: string; max: number }
  | { kind: "absolute"; what: string; value: number; unit: string; digits?: number; max?: number; min?: number }
  | { kind: "condition"; what: string; holds: boolean }

export interface BenchResult {
  name: string
  /** What was measured, in words and numbers, printed as is. */
  details: string[]
  checks: Check[]
}

export function passes(check: Check): boolean {
  if (check.kind === "condition") return check.holds
  if (check.kind === "ratio") return check.ratio <= check.max
  return (check.max === undefined || check.value <= check.max) && (check.min === undefined || check.value >= check.min)
}

export function describeCheck(check: Check): string {
  if (check.kind === "condition") return `${check.what}: ${check.holds ? "yes" : "NO"}`
  if (check.kind === "ratio") {
    return `${check.what}: ratio ${check.ratio.toFixed(2)}x against ${check.baseline}, measured in this run (target: at most ${check.max}x)`
  }
  const bounds = [check.max === undefined ? "" : `at most ${check.max} ${check.unit}`, check.min === undefined ? "" : `at least ${check.min} ${check.unit}`]
  return `${check.what}: absolute ${check.value.toFixed(check.digits ?? 1)} ${check.unit} (target: ${bounds.filter(Boolean).join(" and ")})`
}

export function report(result: BenchResult): boolean {
  console.log(`\n## ${result.name}`)
  for (const line of result.details) console.log(`   ${line}`)
  let ok = true
  for (const check of result.checks) {
    const pass = passes(check)
    ok &&= pass
    console.log(`   ${describeCheck(check)}  ${pass ? "PASS" : "FAIL"}`)
  }
  return ok
}
