// Small timing helpers. Benchmarks compare two things measured side by side in one run, because
// absolute numbers on a shared machine say little; ratios are what the targets are about.

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

export interface BenchResult {
  name: string
  /** What was measured, in words and numbers, printed as is. */
  details: string[]
  ratio?: number
  target?: { max: number; label: string }
  /** A target on an absolute amount (a size, not a time), judged instead of a ratio. */
  absolute?: { value: number; max: number; unit: string; label: string }
}

export function report(result: BenchResult): boolean {
  const verdict = result.absolute
    ? result.absolute.value <= result.absolute.max ? "  PASS" : "  FAIL"
    : result.ratio === undefined || !result.target ? "" : result.ratio <= result.target.max ? "  PASS" : "  FAIL"
  console.log(`\n## ${result.name}`)
  for (const line of result.details) console.log(`   ${line}`)
  if (result.absolute) {
    console.log(`   ${result.absolute.value.toLocaleString("en-US")} ${result.absolute.unit} (target: ${result.absolute.label})${verdict}`)
  } else if (result.ratio !== undefined && result.target) {
    console.log(`   ratio ${result.ratio.toFixed(2)}x (target: ${result.target.label})${verdict}`)
  }
  return verdict !== "  FAIL"
}
