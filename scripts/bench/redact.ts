// Redaction throughput: one 10 MB transcript as phase 1 renders it (prose, code, tool calls with
// JSON inputs, logs, config files, and now and then a secret), redacted whole. Every exit of the
// plugin runs the redactor, so it must keep up with the largest text it is given.
import { redact } from "../../src/redact/redact.js"
import { median, type BenchResult } from "./measure.js"

const TARGET_BYTES = 10 * 1024 * 1024
const TARGET_MB_PER_S = 20
const ROUNDS = 7
const SEED = 20_260_302

export async function benchRedact(): Promise<BenchResult> {
  const { text, planted } = generateTranscript()
  const megabytes = Buffer.byteLength(text) / (1024 * 1024)
  const first = redact(text)
  const missed = planted.filter((secret) => first.text.includes(secret))
  if (missed.length) throw new Error(`benchmark: ${missed.length} planted secrets survived redaction, e.g. ${missed[0]!.slice(0, 12)}...`)
  const samples: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now()
    const result = redact(text)
    samples.push(performance.now() - start)
    if (result.text !== first.text) throw new Error("benchmark: two redactions of the same text differ")
  }
  const medianMs = median(samples)
  const throughput = megabytes / (medianMs / 1000)
  const replaced = Object.values(first.counts).reduce((sum, count) => sum + count, 0)
  return {
    name: "redact: one 10 MB mixed transcript",
    details: [
      `input         ${megabytes.toFixed(1)} MB, ${planted.length} planted secrets of ${Object.keys(first.counts).length} classes, ${replaced} replaced`,
      `redact        ${medianMs.toFixed(0)} ms median of ${ROUNDS} (min ${Math.min(...samples).toFixed(0)}, max ${Math.max(...samples).toFixed(0)}): ${throughput.toFixed(1)} MB/s`,
    ],
    checks: [{ kind: "absolute", what: "throughput at the median time", value: throughput, unit: "MB/s", min: TARGET_MB_PER_S }],
  }
}

// ---- The transcript: seeded blocks in the rendered format until it reaches TARGET_BYTES. ----

const WORDS = (
  "the a to of and in is for that it with on this test file function return const error value config build " +
  "session memory cache request response update deploy branch commit import export timeout retry handler " +
  "parse render module package script database query index schema migration token key password secret auth"
).split(" ")

function generateTranscript(): { text: string; planted: string[] } {
  const random = seeded(SEED)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
  const chars = (alphabet: string, length: number) => Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join("")
  const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
  const HEX = "0123456789abcdef"
  const prose = (words: number) => Array.from({ length: words }, () => pick(WORDS)).join(" ")
  const planted: string[] = []
  const plant = (secret: string) => (planted.push(secret), secret)

  const secrets = [
    () => `export GITHUB_TOKEN=${plant(`ghp_${chars(ALNUM, 36)}`)}`,
    () => `OPENAI_API_KEY=${plant(`sk-proj-${chars(ALNUM, 60)}`)}`,
    () => `aws_access_key_id = ${plant(`AKIA${chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)}`)}`,
    () => `"password": "${plant(`${chars(ALNUM, 12)}#${chars(HEX, 4)}`)}"`,
    () => `DATABASE_URL=postgres://app:${plant(chars(ALNUM, 16))}@db:5432/app`,
    () => `curl -H "Authorization: Bearer ${plant(chars(ALNUM, 40))}" https://api.acme.dev/v1/me`,
    () => `client = WebClient(token="${plant(`xoxb-${chars("0123456789", 12)}-${chars(ALNUM, 24)}`)}")`,
  ]
  const blocks = [
    () => `[user]\n${prose(20 + Math.floor(random() * 60))}?`,
    () => `[assistant]\n${prose(40 + Math.floor(random() * 120))}.`,
    () => {
      const lines = Array.from({ length: 5 + Math.floor(random() * 40) }, (_, i) => `${String(i + 1).padStart(5, "0")}| const ${pick(WORDS)}_${i} = ${pick(WORDS)}(${pick(WORDS)}, { max_tokens: ${Math.floor(random() * 8192)} })`)
      return `[tool read] {"filePath":"/repo/src/${pick(WORDS)}.ts"}\n${lines.join("\n")}`
    },
    () => {
      const lines = Array.from({ length: 5 + Math.floor(random() * 30) }, () => `2026-03-01T09:${chars("012345", 1)}${chars("0123456789", 1)}:00Z INFO ${pick(WORDS)} request_id=${chars(HEX, 8)}-${chars(HEX, 4)} token validated in ${Math.floor(random() * 90)}ms`)
      return `[tool bash] {"command":"kubectl logs deploy/api --tail=50","description":"${prose(5)}"}\n${lines.join("\n")}`
    },
    () => `[tool write] {"filePath":"/repo/config/${pick(WORDS)}.json","content":"{\\n  \\"name\\": \\"${pick(WORDS)}\\",\\n  \\"max_tokens\\": 4096,\\n  \\"tokenizer\\": \\"cl100k\\"\\n}"}\nWrote file successfully.`,
    () => `[tool read] {"filePath":"/repo/deploy.yaml"}\nenv:\n  - name: DB_HOST\n    value: db.internal\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: api-secrets\n        key: db-password\nimage: ghcr.io/acme/api@sha256:${chars(HEX, 64)}`,
    () => `[tool bash] {"command":"git log -3 --oneline"}\n${Array.from({ length: 3 }, () => `${chars(HEX, 40)} ${prose(6)}`).join("\n")}`,
  ]

  const out: string[] = []
  let bytes = 0
  for (let n = 0; bytes < TARGET_BYTES; n++) {
    // About one block in forty carries a secret.
    const block = n % 40 === 39 ? `[tool bash] {"command":"cat .env"}\n${pick(secrets)()}` : pick(blocks)()
    out.push(block)
    bytes += Buffer.byteLength(block) + 2
  }
  return { text: out.join("\n\n"), planted }
}

/** A linear congruential generator: the same seed gives the same transcript on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
    return state / 2 ** 32
  }
}
