// The token estimator (src/util/token-estimate.ts) against the real tokenizers, on the seeded
// corpus of scripts/bench/token-corpus.ts: estimate / real count for every sample, in o200k_base
// and cl100k_base (gpt-tokenizer, a dev dependency), per content class; and its throughput on
// the whole corpus beside gpt-tokenizer's o200k encoder, measured in the same run. The estimator
// must never undercount by more than 5% in either encoding, must not overcount English prose by
// more than 25%, and must keep up with the largest transcript the plugin sizes.
import { countTokens as countCl100k } from "gpt-tokenizer/encoding/cl100k_base"
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base"
import { estimateTokens, headWithin, tailWithin } from "../../src/util/token-estimate.js"
import { median, type BenchResult } from "./measure.js"
import { tokenCorpus } from "./token-corpus.js"

const MIN_RATIO = 0.95
const ENGLISH_MAX_RATIO = 1.25
const TARGET_MB_PER_S = 20
/** The estimator's time on the corpus may be at most this share of o200k's (measured: 0.06-0.08). */
const TIME_RATIO_MAX = 0.25
const ROUNDS = 7

export async function benchTokens(): Promise<BenchResult> {
  const corpus = tokenCorpus()
  const measured = corpus.map((sample) => {
    const estimate = estimateTokens(sample.text)
    return { ...sample, o200k: estimate / countO200k(sample.text), cl100k: estimate / countCl100k(sample.text) }
  })
  const rows = new Map<string, { samples: number; bytes: number; o200k: number[]; cl100k: number[] }>()
  for (const sample of measured) {
    const row = rows.get(sample.class) ?? { samples: 0, bytes: 0, o200k: [], cl100k: [] }
    row.samples++
    row.bytes += Buffer.byteLength(sample.text)
    row.o200k.push(sample.o200k)
    row.cl100k.push(sample.cl100k)
    rows.set(sample.class, row)
  }
  const range = (ratios: number[]) => `${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)}`
  const table = [...rows].map(
    ([cls, row]) => `${cls.padEnd(14)} ${String(row.samples).padStart(2)} ${`${(row.bytes / 1024).toFixed(0)} KB`.padStart(7)}   ${range(row.o200k).padEnd(13)}  ${range(row.cl100k)}`,
  )
  const all = [...rows.values()].flatMap((row) => [...row.o200k, ...row.cl100k])
  const minRatio = Math.min(...all)
  const english = rows.get("english")!
  const englishMax = Math.max(...english.o200k, ...english.cl100k)
  const lowest = measured
    .map((sample) => ({ name: sample.name, ratio: Math.min(sample.o200k, sample.cl100k) }))
    .sort((a, b) => a.ratio - b.ratio)
    .slice(0, 4)
    .map(({ name, ratio }) => `${name} ${ratio.toFixed(3)}`)

  // Throughput on the whole corpus as one mixed text.
  const text = corpus.map((sample) => sample.text).join("\n\n")
  const megabytes = Buffer.byteLength(text) / (1024 * 1024)
  const time = (fn: () => unknown, rounds: number) => {
    const samples: number[] = []
    for (let round = 0; round < rounds; round++) {
      const start = performance.now()
      fn()
      samples.push(performance.now() - start)
    }
    return median(samples)
  }
  time(() => estimateTokens(text), 2)
  const estimateMs = time(() => estimateTokens(text), ROUNDS)
  const headMs = time(() => headWithin(text, Number.MAX_SAFE_INTEGER), ROUNDS)
  const tailMs = time(() => tailWithin(text, Number.MAX_SAFE_INTEGER), ROUNDS)
  const o200kMs = time(() => countO200k(text), 3)
  const rate = (ms: number) => megabytes / (ms / 1000)

  return {
    name: "token estimate: estimate / real tokens per content class, and throughput beside gpt-tokenizer",
    details: [
      `corpus        ${corpus.length} seeded samples of ${rows.size} classes, ${megabytes.toFixed(2)} MB (scripts/bench/token-corpus.ts)`,
      `class          n    size   o200k min-max  cl100k min-max`,
      ...table,
      `lowest        ${lowest.join(", ")}`,
      `throughput    estimateTokens ${rate(estimateMs).toFixed(1)} MB/s, headWithin ${rate(headMs).toFixed(1)} MB/s, tailWithin ${rate(tailMs).toFixed(1)} MB/s; gpt-tokenizer o200k countTokens ${rate(o200kMs).toFixed(1)} MB/s (medians)`,
    ],
    checks: [
      { kind: "absolute", what: "lowest estimate / real, any sample, either encoding", value: minRatio, unit: "x", digits: 3, min: MIN_RATIO },
      { kind: "absolute", what: "highest estimate / real on English prose, either encoding", value: englishMax, unit: "x", digits: 3, max: ENGLISH_MAX_RATIO },
      { kind: "absolute", what: "estimateTokens throughput on the mixed corpus", value: rate(estimateMs), unit: "MB/s", min: TARGET_MB_PER_S },
      { kind: "ratio", what: "estimateTokens time on the corpus", ratio: estimateMs / o200kMs, baseline: "gpt-tokenizer o200k countTokens", max: TIME_RATIO_MAX },
    ],
  }
}
