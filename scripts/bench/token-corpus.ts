// The corpus the token estimator (src/util/token-estimate.ts) is calibrated and checked on, shared
// by its unit test and `npm run bench -- tokens`: several samples of each content class a
// transcript holds, generated from a seeded PRNG, so every run sees the same text and nothing
// large is committed. Samples vary word lists, lengths, languages and layouts on purpose: the
// estimator must hold on text it was not tuned on, so no class rests on one generator.

export interface CorpusSample {
  class: string
  /** Which generator, for messages: "english/common", "code/go", ... */
  name: string
  text: string
}

/** Every sample, in a fixed order. `scale` multiplies each sample's target size (1: 4-24 KB). */
export function tokenCorpus(seed = 38, scale = 1): CorpusSample[] {
  const out: CorpusSample[] = []
  for (const [cls, name, generate, kilobytes] of GENERATORS) {
    // Seeded by name, so adding a generator leaves every other sample as it was.
    const rng = new Rng(seed * 1_000_003 + hash(`${cls}/${name}`))
    const target = Math.round(kilobytes * 1024 * scale)
    out.push({ class: cls, name: `${cls}/${name}`, text: fill(rng, target, generate) })
  }
  return out
}

/** The content classes, in the order the corpus holds them. */
export function corpusClasses(): string[] {
  return [...new Set(GENERATORS.map(([cls]) => cls))]
}

type Generate = (rng: Rng) => string

/** FNV-1a of a string, as a 32-bit unsigned integer. */
function hash(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h >>> 0
}

/** Blocks from `generate` until the text reaches `bytes` of UTF-8. */
function fill(rng: Rng, bytes: number, generate: Generate): string {
  const parts: string[] = []
  let size = 0
  while (size < bytes) {
    const part = generate(rng)
    parts.push(part)
    size += Buffer.byteLength(part)
  }
  return parts.join("")
}

/** xorshift32 with a splitmix-style seed scramble: small, fast and the same on every platform. */
class Rng {
  private state: number
  constructor(seed: number) {
    let s = (seed ^ 0x9e3779b9) >>> 0
    s = Math.imul(s ^ (s >>> 16), 0x85ebca6b) >>> 0
    s = Math.imul(s ^ (s >>> 13), 0xc2b2ae35) >>> 0
    this.state = (s ^ (s >>> 16)) >>> 0 || 1
  }
  next(): number {
    let x = this.state
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    this.state = x >>> 0
    return this.state / 2 ** 32
  }
  int(low: number, high: number): number {
    return low + Math.floor(this.next() * (high - low + 1))
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!
  }
  chance(p: number): boolean {
    return this.next() < p
  }
  chars(alphabet: string, length: number): string {
    let s = ""
    for (let i = 0; i < length; i++) s += alphabet[Math.floor(this.next() * alphabet.length)]
    return s
  }
  bytes(length: number): Buffer {
    const b = Buffer.alloc(length)
    for (let i = 0; i < length; i++) b[i] = Math.floor(this.next() * 256)
    return b
  }
}

const words = (text: string) => text.trim().split(/\s+/)

// ---- Word lists (written for this corpus) ----

const COMMON = words(`
the of and to in is it you that he was for on are with as his they be at one have this from or had by
not word but what some we can out other were all there when up use your how said an each she which do
their time if will way about many then them write would like so these her long make thing see him two
has look more day could go come did number sound no most people my over know water than call first who
may down side been now find any new work part take get place made live where after back little only
round man year came show every good me give our under name very through just form sentence great think
say help low line differ turn cause much mean before move right boy old too same tell does set three want
air well also play small end put home read hand port large spell add even land here must big high such
follow act why ask men change went light kind off need house picture try us again animal point mother
world near build self earth father head stand own page should country found answer school grow study
still learn plant cover food sun four between state keep eye never last let thought city tree cross farm
hard start might story saw far sea draw left late run while press close night real life few north open
`)

const TECHNICAL = words(`
server client request response cache memory session database query index schema migration token
config build deploy branch commit merge rebase release version package module import export function
variable parameter argument return value error exception timeout retry handler callback promise async
await thread process worker queue message event stream buffer socket connection latency throughput
benchmark profile allocation garbage collector pointer reference compiler interpreter runtime library
framework dependency install upgrade rollback container cluster node replica shard partition backup
restore snapshot checksum integrity signature certificate encryption authentication authorization
permission credential secret password rotate expire refresh invalidate consistent eventually durable
transaction isolation deadlock contention lock mutex semaphore atomic concurrent parallel sequential
pipeline stage artifact registry manifest lockfile workspace repository directory filesystem path
`)

const LITERARY = words(`
meticulous ephemeral juxtaposition labyrinthine serendipity melancholy idiosyncratic ubiquitous
quintessential perfunctory obfuscate recalcitrant sycophantic magnanimous pernicious loquacious
inexorable indefatigable surreptitious vicissitude ambivalence equanimity effervescent gregarious
cacophony mellifluous prosaic esoteric anachronism palimpsest verisimilitude phantasmagoria
tintinnabulation susurrus petrichor sonorous luminous incandescent crepuscular vespertine halcyon
obstreperous cantankerous pusillanimous persnickety lackadaisical flabbergasted discombobulated
antidisestablishmentarianism incomprehensibility counterintuitive uncharacteristically
hippopotamus rhinoceros chrysanthemum bougainvillea rhododendron eucalyptus archipelago fjord
quixotic zephyr sphinx rhythm glyph crypt nymph lynx myrrh pygmy tryst gypsy syzygy xylophone
kaleidoscope onomatopoeia pneumonia psychology mnemonic gnome knight wrought thoroughfare
`)

// Original sentences, shuffled into paragraphs: prose as a person writes it, not a bag of words.
const SENTENCES = [
  "The migration finished at a quarter past nine, but nobody noticed that the old index was still being read by two of the workers.",
  "When she opened the report, the first thing she saw was a table of 14 numbers, none of which matched what the dashboard showed.",
  "It is tempting to blame the network; in practice, the slow requests were waiting on a lock held by a forgotten cron job.",
  "We tried three approaches (a bigger cache, a smaller batch, and a second replica) before settling on the simplest one.",
  "\"Don't restart it yet,\" he said, \"I want to see whether the queue drains on its own.\"",
  "By Thursday the backlog had shrunk from 2,400 tickets to just under 300, which felt like a small miracle.",
  "Nothing in the documentation explained why the option existed, so we read the source and found a comment from 2017.",
  "The river was higher than anyone in the village could remember, and the bridge creaked every time a cart went over it.",
  "She kept a notebook of every mistake she made in her first year, and later said it was the most useful book she owned.",
  "If the test fails only on Mondays, look for something that depends on the calendar: a log rotation, a report, a backup.",
  "Our goal is modest: answer the question the user asked, cite where the answer came from, and stop.",
  "He walked to the station in the rain, missed the 7:42 train by a minute, and spent the wait rewriting his talk.",
  "A good error message says what happened, why it matters, and what to do next; most say only the first.",
  "The committee met twice, disagreed about almost everything, and still managed to publish the guidelines on time.",
  "Old maps of the harbour show a lighthouse on the northern rock, though no trace of it remains today.",
  "Please keep the summary short - three or four sentences - and put the details in the appendix.",
  "After the upgrade, memory use dropped by about 35%, but start-up time grew from 1.2 to 1.9 seconds.",
  "The children built a fort out of blankets and chairs, declared it a kingdom, and refused to come down for dinner.",
  "Why does the build take eleven minutes? Mostly because it compiles the same files twice.",
  "In the spring the orchard smelled of blossom, and by August the branches bent under the weight of the fruit.",
  "The contract was signed on 3 March, amended in June, and quietly forgotten by everyone except the lawyers.",
  "Measure first, then optimise; the part you are sure is slow is rarely the part that is.",
  "Her grandmother's recipe called for a pinch of salt, two cups of flour, and an amount of butter best left unspoken.",
  "Every request carries a deadline, and every layer that waits must respect it, or the whole chain falls over.",
  "They argued for an hour about the name of the function, then shipped it as helper2 and moved on.",
  "The museum's newest exhibit, a collection of 19th-century clocks, ticks in a way visitors describe as unsettling.",
  "On a clear night you can see the lights of the city from the top of the hill, about forty kilometres away.",
  "If you are reading this, the backup worked; if not, well, you are not reading this.",
]

// ---- English prose ----

function sentence(rng: Rng, list: readonly string[], minWords: number, maxWords: number): string {
  const count = rng.int(minWords, maxWords)
  const parts: string[] = []
  for (let i = 0; i < count; i++) {
    let w = rng.pick(list)
    if (i === 0) w = w[0]!.toUpperCase() + w.slice(1)
    else if (rng.chance(0.03)) w = w[0]!.toUpperCase() + w.slice(1)
    if (rng.chance(0.03)) w = String(rng.int(0, rng.chance(0.5) ? 99 : 9999))
    if (i < count - 1 && rng.chance(0.08)) w += rng.pick([",", ",", ",", ";", ":"])
    if (rng.chance(0.015)) w = `(${w})`
    if (rng.chance(0.01)) w = `"${w}"`
    parts.push(w)
  }
  return parts.join(" ") + rng.pick([".", ".", ".", ".", "?", "!"])
}

function paragraphOf(rng: Rng, list: readonly string[], min: number, max: number): string {
  const count = rng.int(3, 7)
  const out: string[] = []
  for (let i = 0; i < count; i++) out.push(sentence(rng, list, min, max))
  return out.join(" ") + "\n\n"
}

const englishCommon: Generate = (rng) => paragraphOf(rng, COMMON, 6, 22)
const englishTechnical: Generate = (rng) => paragraphOf(rng, [...COMMON, ...COMMON, ...TECHNICAL], 8, 26)
const englishRare: Generate = (rng) => paragraphOf(rng, [...COMMON, ...COMMON, ...COMMON, ...LITERARY], 8, 24)
const englishWritten: Generate = (rng) => {
  const count = rng.int(2, 6)
  const out: string[] = []
  for (let i = 0; i < count; i++) out.push(rng.pick(SENTENCES))
  return out.join(" ") + (rng.chance(0.2) ? "\n" : "\n\n")
}
// Prose as editors and word processors set it: curly quotes and apostrophes, dashes, ellipses.
const englishTypographic: Generate = (rng) =>
  englishWritten(rng).replace(/"([^"]*)"/g, "\u201c$1\u201d").replace(/'/g, "\u2019").replace(/ - /g, " \u2014 ").replace(/\?$/, "\u2026")
const englishMarkdown: Generate = (rng) => {
  const title = sentence(rng, TECHNICAL, 2, 5).slice(0, -1)
  const bullets = Array.from({ length: rng.int(2, 5) }, () => `- ${sentence(rng, [...COMMON, ...TECHNICAL], 5, 14)}`)
  return `## ${title}\n\n${paragraphOf(rng, [...COMMON, ...TECHNICAL], 6, 18)}${bullets.join("\n")}\n\n`
}

// ---- Source code ----

const IDENT = words(`
user item count total index value result config options request response cache store entry key name
path file buffer stream handler callback error message event queue worker task job session token limit
offset size length start end first last next prev parent child node tree list map set state status
`)

const camel = (rng: Rng, parts: number) => {
  let s = rng.pick(IDENT)
  for (let i = 1; i < parts; i++) { const w = rng.pick(IDENT); s += w[0]!.toUpperCase() + w.slice(1) }
  return s
}
const snake = (rng: Rng, parts: number) => Array.from({ length: parts }, () => rng.pick(IDENT)).join("_")
const pascal = (rng: Rng, parts: number) => { const c = camel(rng, parts); return c[0]!.toUpperCase() + c.slice(1) }

const codeTs: Generate = (rng) => {
  const fn = camel(rng, rng.int(1, 3))
  const a = camel(rng, rng.int(1, 2))
  const b = camel(rng, 1)
  const type = pascal(rng, rng.int(1, 2))
  const lines = [
    `/** ${sentence(rng, [...COMMON, ...TECHNICAL], 6, 14)} */`,
    `export async function ${fn}(${a}: ${type}, ${b}: number = ${rng.int(0, 500)}): Promise<${type}[]> {`,
    `  const ${camel(rng, 2)} = new Map<string, ${type}>()`,
    `  for (const ${b}Item of ${a}.${camel(rng, 1)}) {`,
    `    if (${b}Item.${camel(rng, 1)} > ${b} && !${b}Item.${camel(rng, 2)}) continue`,
    `    await ${camel(rng, 2)}(${b}Item, { retries: ${rng.int(1, 9)}, timeoutMs: ${rng.int(100, 30000)} })`,
    `  }`,
    `  return [...${a}.${camel(rng, 1)}].filter((x) => x.${camel(rng, 1)} !== undefined) // ${sentence(rng, COMMON, 3, 8)}`,
    `}`,
    ``,
    `interface ${type} { ${camel(rng, 1)}: string; ${camel(rng, 2)}?: number[]; readonly ${camel(rng, 1)}: boolean }`,
    ``,
  ]
  return lines.join("\n") + "\n"
}

const codePython: Generate = (rng) => {
  const fn = snake(rng, rng.int(1, 3))
  const cls = pascal(rng, rng.int(1, 2))
  const v = snake(rng, 1)
  return [
    `class ${cls}:`,
    `    """${sentence(rng, [...COMMON, ...TECHNICAL], 6, 14)}"""`,
    ``,
    `    def ${fn}(self, ${v}: list[str], limit: int = ${rng.int(1, 1000)}) -> dict[str, int]:`,
    `        ${snake(rng, 2)} = {}`,
    `        for i, ${v}_item in enumerate(${v}):`,
    `            if i >= limit or not ${v}_item.strip():`,
    `                break`,
    `            ${snake(rng, 2)}[${v}_item] = self.${snake(rng, 2)}.get(${v}_item, 0) + ${rng.int(1, 9)}`,
    `        # ${sentence(rng, COMMON, 4, 10)}`,
    `        return {k: v for k, v in sorted(${snake(rng, 1)}.items()) if v > ${rng.int(0, 50)}}`,
    ``,
    `    @property`,
    `    def ${snake(rng, 1)}(self) -> str:`,
    `        return f"{self.${snake(rng, 1)}}:{self.${snake(rng, 1)}!r} ({len(self.${snake(rng, 1)})} items)"`,
    ``,
    ``,
  ].join("\n")
}

const codeGo: Generate = (rng) => {
  const fn = pascal(rng, rng.int(1, 3))
  const recv = rng.pick(IDENT)[0]!
  const typ = pascal(rng, 1)
  return [
    `// ${fn} ${sentence(rng, [...COMMON, ...TECHNICAL], 5, 12)}`,
    `func (${recv} *${typ}) ${fn}(ctx context.Context, ${camel(rng, 1)} []byte) (int, error) {`,
    `\t${recv}.mu.Lock()`,
    `\tdefer ${recv}.mu.Unlock()`,
    `\tif len(${recv}.${camel(rng, 1)}) > ${rng.int(16, 4096)} {`,
    `\t\treturn 0, fmt.Errorf("${camel(rng, 1)}: %w (got %d)", Err${pascal(rng, 1)}, len(${recv}.${camel(rng, 1)}))`,
    `\t}`,
    `\tn, err := ${recv}.${camel(rng, 1)}.Write(${camel(rng, 1)})`,
    `\tif err != nil {`,
    `\t\treturn n, err`,
    `\t}`,
    `\tselect {`,
    `\tcase <-ctx.Done():`,
    `\t\treturn n, ctx.Err()`,
    `\tcase ${recv}.${camel(rng, 1)} <- struct{}{}:`,
    `\t}`,
    `\treturn n, nil`,
    `}`,
    ``,
    ``,
  ].join("\n")
}

const codeShell: Generate = (rng) => {
  const v = snake(rng, 1).toUpperCase()
  return [
    `#!/usr/bin/env bash`,
    `set -euo pipefail`,
    `${v}="\${${v}:-/var/lib/${rng.pick(IDENT)}}"`,
    `for f in "$${v}"/*.${rng.pick(["log", "json", "tar.gz", "txt"])}; do`,
    `  [ -f "$f" ] || continue`,
    `  size=$(stat -c %s "$f")`,
    `  if [ "$size" -gt ${rng.int(1000, 99999999)} ]; then`,
    `    echo "rotating $f ($size bytes)" >&2`,
    `    gzip -${rng.int(1, 9)} "$f" && mv "$f.gz" "$${v}/archive/$(date +%Y%m%d)-$(basename "$f").gz"`,
    `  fi`,
    `done`,
    `grep -rn --include='*.${rng.pick(["ts", "py", "go"])}' '${camel(rng, 2)}' src/ | awk -F: '{print $1}' | sort -u | xargs -r wc -l`,
    `# ${sentence(rng, COMMON, 4, 10)}`,
    ``,
  ].join("\n")
}

// ---- JSON ----

function jsonValue(rng: Rng, depth: number): unknown {
  const r = rng.next()
  if (depth > 2 || r < 0.45) {
    const kind = rng.int(0, 11)
    if (kind === 0) return rng.int(0, 100000)
    if (kind === 1) return Math.round(rng.next() * 1e6) / 1e3
    if (kind === 2) return rng.chance(0.5)
    if (kind === 3) return `${hex(rng, 8)}-${hex(rng, 4)}-4${hex(rng, 3)}-${hex(rng, 4)}-${hex(rng, 12)}`
    if (kind === 4) return `2026-0${rng.int(1, 9)}-${String(rng.int(1, 28)).padStart(2, "0")}T${String(rng.int(0, 23)).padStart(2, "0")}:${String(rng.int(0, 59)).padStart(2, "0")}:00Z`
    if (kind === 5) return sentence(rng, [...COMMON, ...TECHNICAL], 2, 9)
    // What real JSON holds besides words: package and host names, paths, versions, emails, ids.
    if (kind === 6) return `${packageName(rng)}${rng.chance(0.5) ? `@${semverOf(rng)}` : ""}`
    if (kind === 7) return `/${filePath(rng)}`
    if (kind === 8) return `${rng.chars("abcdefghijklmnopqrstuvwxyz", rng.int(3, 9))}@${rng.pick(IDENT)}.${rng.pick(["com", "io", "dev"])}`
    if (kind === 9) return `${rng.pick(["usr", "ord", "evt", "tok", "req"])}_${rng.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", rng.int(8, 24))}`
    if (kind === 10) return `https://${rng.pick(IDENT)}.${rng.pick(["com", "io", "dev"])}/${rng.pick(DIRS)}/${rng.int(1, 9999)}`
    return rng.chance(0.2) ? null : camel(rng, rng.int(1, 3))
  }
  if (r < 0.65) return Array.from({ length: rng.int(1, 5) }, () => jsonValue(rng, depth + 1))
  const obj: Record<string, unknown> = {}
  for (let i = rng.int(2, 6); i > 0; i--) {
    const k = rng.int(0, 3)
    const key = k === 0 ? camel(rng, rng.int(1, 2)) : k === 1 ? snake(rng, rng.int(1, 2)) : k === 2 ? `${rng.pick(IDENT)}-${rng.pick(IDENT)}` : packageName(rng)
    obj[key] = jsonValue(rng, depth + 1)
  }
  return obj
}

const jsonPretty: Generate = (rng) => JSON.stringify({ id: rng.int(1, 1e6), [camel(rng, 1)]: jsonValue(rng, 0), data: jsonValue(rng, 1) }, null, rng.chance(0.5) ? 2 : 4) + "\n"
const jsonCompact: Generate = (rng) => JSON.stringify({ id: rng.int(1, 1e6), [snake(rng, 2)]: jsonValue(rng, 0), items: [jsonValue(rng, 1), jsonValue(rng, 1)] }) + "\n"

// ---- Minified JavaScript ----

const minifiedJs: Generate = (rng) => {
  const v = () => rng.chars("abcdefghijklmnopqrstuvwxyz", 1) + (rng.chance(0.3) ? rng.chars("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$0123456789", 1) : "")
  const exprs = [
    () => `${v()}.${camel(rng, rng.int(1, 2))}(${v()},${v()})`,
    () => `${v()}=${v()}[${rng.int(0, 99)}]|0`,
    () => `"${camel(rng, rng.int(1, 3))}"===typeof ${v()}`,
    () => `${v()}&&${v()}.${rng.pick(IDENT)}?${v()}:void 0`,
    () => `!0`,
    () => `${v()}+=${v()}<<${rng.int(1, 24)}`,
    () => `new ${pascal(rng, 1)}(${v()},{${rng.pick(IDENT)}:${v()},${rng.pick(IDENT)}:!1})`,
    () => `"${sentence(rng, TECHNICAL, 1, 4).slice(0, -1)}"`,
    () => `0x${rng.chars("0123456789abcdef", rng.int(2, 8))}`,
  ]
  const stmt = () => {
    const k = rng.int(0, 4)
    const e = () => rng.pick(exprs)()
    if (k === 0) return `function ${v()}(${v()},${v()}){return ${e()}}`
    if (k === 1) return `var ${v()}=${e()},${v()}=${e()};`
    if (k === 2) return `if(${e()}){${e()};${e()}}else ${e()};`
    if (k === 3) return `${v()}.exports=function(${v()}){for(var ${v()}=0;${v()}<${v()}.length;${v()}++)${e()};return ${e()}};`
    return `${e()},${e()};`
  }
  let s = ""
  for (let i = rng.int(5, 15); i > 0; i--) s += stmt()
  return s
}

// A bundler's output: a module table of arrow functions, template literals and long member chains.
const minifiedBundle: Generate = (rng) => {
  const id = () => rng.chars("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 1) + (rng.chance(0.5) ? rng.chars("abcdefghijklmnopqrstuvwxyz0123456789_$", rng.int(1, 2)) : "")
  const member = () => Array.from({ length: rng.int(1, 4) }, () => (rng.chance(0.7) ? camel(rng, rng.int(1, 2)) : id())).join(".")
  const parts = [
    () => `${rng.int(100, 99999)}:(${id()},${id()},${id()})=>{"use strict";${id()}.d(${id()},{${camel(rng, 1)}:()=>${id()}});`,
    () => `const ${id()}=${id()}(${rng.int(1, 9999)}),${id()}=${id()}.n(${id()});`,
    () => `${id()}.${member()}=async(${id()},${id()}={})=>{const{${camel(rng, 1)}:${id()},${camel(rng, 1)}:${id()}=${rng.int(0, 500)}}=${id()};`,
    () => "return`${" + id() + "}/" + rng.pick(DIRS) + "/${" + member() + "}?" + snake(rng, 1) + "=${" + id() + "}`};",
    () => `try{${id()}=await fetch(${id()},{method:"${rng.pick(["GET", "POST", "PUT"])}",headers:{"content-type":"application/json"}})}catch(${id()}){throw new Error(\`${sentence(rng, TECHNICAL, 2, 5).slice(0, -1)}: \${${id()}.message}\`)}`,
    () => `${id()}?.${member()}??${id()}.${member()}(${rng.int(0, 64)},!0)||${id()}.push(...${id()});`,
    () => `}},`,
  ]
  let out = ""
  for (let i = rng.int(6, 16); i > 0; i--) out += rng.pick(parts)()
  return out
}

// ---- Lockfiles ----

const PACKAGES = words(`
react lodash express chalk debug semver commander yargs minimist glob rimraf mkdirp uuid axios
typescript esbuild vite rollup webpack babel-core eslint prettier jest vitest mocha sinon zod
ms supports-color has-flag ansi-styles escape-string-regexp color-convert color-name tslib
`)
const CRATES = words(`serde serde_json tokio futures anyhow thiserror clap regex rand log tracing bytes hyper syn quote proc-macro2 libc once_cell itertools`)

// Names that are no dictionary word, as package, host and container names often are: "chokidar".
const pseudoWord = (rng: Rng) => {
  let w = ""
  for (let i = rng.int(2, 4); i > 0; i--) w += rng.pick([..."bcdfghjklmnprstvwz", "ch", "sh", "tr", "qu"]) + rng.pick([..."aeiouy", "ai", "ee", "io"]) + (rng.chance(0.3) ? rng.pick([..."nrsxkl"]) : "")
  return w
}
const packageName = (rng: Rng) => (rng.chance(0.5) ? rng.pick(PACKAGES) : rng.chance(0.5) ? pseudoWord(rng) : `${pseudoWord(rng)}-${rng.pick(IDENT)}`)
const semverOf = (rng: Rng) => `${rng.int(0, 12)}.${rng.int(0, 30)}.${rng.int(0, 40)}`
const b64 = (rng: Rng, bytes: number) => rng.bytes(bytes).toString("base64")
const hex = (rng: Rng, n: number) => rng.chars("0123456789abcdef", n)

const packageLock: Generate = (rng) => {
  const name = packageName(rng)
  const ver = semverOf(rng)
  const deps = Array.from({ length: rng.int(0, 3) }, () => `        "${rng.pick(PACKAGES)}": "^${semverOf(rng)}"`)
  return [
    `    "node_modules/${name}": {`,
    `      "version": "${ver}",`,
    `      "resolved": "https://registry.npmjs.org/${name}/-/${name}-${ver}.tgz",`,
    `      "integrity": "sha512-${b64(rng, 64)}",`,
    ...(rng.chance(0.3) ? [`      "dev": true,`] : []),
    ...(deps.length ? [`      "dependencies": {`, deps.join(",\n"), `      },`] : []),
    `      "license": "${rng.pick(["MIT", "ISC", "Apache-2.0", "BSD-3-Clause"])}"`,
    `    },`,
    ``,
  ].join("\n")
}

const yarnLock: Generate = (rng) => {
  const name = packageName(rng)
  const ver = semverOf(rng)
  const deps = Array.from({ length: rng.int(0, 3) }, () => `    ${rng.pick(PACKAGES)} "^${semverOf(rng)}"`)
  return [
    `${name}@^${ver}, ${name}@~${ver}:`,
    `  version "${ver}"`,
    `  resolved "https://registry.yarnpkg.com/${name}/-/${name}-${ver}.tgz#${hex(rng, 40)}"`,
    `  integrity sha512-${b64(rng, 64)}`,
    ...(deps.length ? [`  dependencies:`, ...deps] : []),
    ``,
    ``,
  ].join("\n")
}

const cargoLock: Generate = (rng) => {
  const deps = Array.from({ length: rng.int(0, 4) }, () => ` "${rng.pick(CRATES)}",`)
  return [
    `[[package]]`,
    `name = "${rng.pick(CRATES)}"`,
    `version = "${semverOf(rng)}"`,
    `source = "registry+https://github.com/rust-lang/crates.io-index"`,
    `checksum = "${hex(rng, 64)}"`,
    ...(deps.length ? [`dependencies = [`, ...deps, `]`] : []),
    ``,
    ``,
  ].join("\n")
}

// ---- Hex ----

const FILES = words(`main.go index.ts app.py README.md package.json Cargo.toml libssl.so.3 vmlinuz-6.8.0 image.tar.gz build.zip data.bin
font.woff2 logo.png schema.sql server.crt config.yaml notes.txt release-v2.4.1.tar.xz checksum.txt`)
const DIRS = words(`src lib bin dist build vendor assets docs tests internal cmd pkg node_modules target release`)
const filePath = (rng: Rng) => Array.from({ length: rng.int(0, 3) }, () => rng.pick(DIRS)).concat(rng.pick(FILES)).join("/")

const sha256Lines: Generate = (rng) => `${hex(rng, 64)}  ${filePath(rng)}\n`
const gitLog: Generate = (rng) => `${hex(rng, 40)} ${sentence(rng, [...COMMON, ...TECHNICAL], 3, 8).slice(0, -1)}\n`
const bareHex: Generate = (rng) => hex(rng, 64) + (rng.chance(0.5) ? "\n" : "")
const hexDump: Generate = (rng) => {
  const off = rng.int(0, 0xfffff) * 16
  const bytes = rng.bytes(16)
  const pairs = [...bytes].map((b) => b.toString(16).padStart(2, "0"))
  const ascii = [...bytes].map((b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : ".")).join("")
  return `${off.toString(16).padStart(8, "0")}  ${pairs.slice(0, 8).join(" ")}  ${pairs.slice(8).join(" ")}  |${ascii}|\n`
}
const upperHex: Generate = (rng) => `SHA1(${rng.pick(FILES)})= ${rng.chars("0123456789ABCDEF", 40)}\nMD5 ${rng.chars("0123456789ABCDEF", 32)}\n`

// ---- Base64 ----

const base64Wrapped: Generate = (rng) => (b64(rng, 57 * rng.int(4, 20)).match(/.{1,76}/g) ?? []).join("\n") + "\n"
const base64Long: Generate = (rng) => b64(rng, rng.int(300, 3000))
const base64Url: Generate = (rng) => rng.bytes(rng.int(200, 2000)).toString("base64url") + "\n"
const jwt: Generate = (rng) => {
  const head = Buffer.from(JSON.stringify({ alg: "RS256", typ: "JWT", kid: hex(rng, 16) })).toString("base64url")
  const body = Buffer.from(JSON.stringify({ sub: camel(rng, 2), iat: rng.int(1.6e9, 1.8e9), scope: sentence(rng, TECHNICAL, 2, 5) })).toString("base64url")
  return `Authorization: Bearer ${head}.${body}.${rng.bytes(256).toString("base64url")}\n`
}

// ---- Numbers ----

const pad = (n: number, w = 2) => String(n).padStart(w, "0")
const timestampLog: Generate = (rng) =>
  `2026-${pad(rng.int(1, 12))}-${pad(rng.int(1, 28))}T${pad(rng.int(0, 23))}:${pad(rng.int(0, 59))}:${pad(rng.int(0, 59))}.${pad(rng.int(0, 999), 3)}Z ${rng.pick(["INFO", "WARN", "DEBUG"])} latency_ms=${(rng.next() * 900).toFixed(3)} bytes=${rng.int(0, 9999999)} cpu=${(rng.next() * 100).toFixed(1)}%\n`
const csvFloats: Generate = (rng) => Array.from({ length: rng.int(4, 10) }, () => (rng.next() * 10 ** rng.int(0, 5) * (rng.chance(0.2) ? -1 : 1)).toFixed(rng.int(1, 6))).join(",") + "\n"
const csvIntegers: Generate = (rng) => Array.from({ length: rng.int(8, 30) }, () => rng.int(0, 10 ** rng.int(1, 9))).join(", ") + "\n"
const metrics: Generate = (rng) =>
  `${rng.int(1.7e9, 1.8e9)} ${(rng.next() * 1e4).toExponential(6)} ${rng.int(0, 65535)} ${(rng.next()).toFixed(9)} ${rng.int(100, 999)}.${rng.int(0, 255)}.${rng.int(0, 255)}.${rng.int(0, 255)}:${rng.int(1024, 65535)}\n`

// ---- CJK ----

const ZH = words(`
我们 你们 他们 这个 那个 系统 内存 数据 文件 用户 问题 时间 已经 可以 因为 所以 但是 如果 需要 没有
一个 工作 发现 处理 服务器 请求 响应 缓存 配置 版本 测试 结果 错误 原因 方法 修改 重新 启动 完成 进行
今天 昨天 明天 公司 项目 团队 讨论 会议 计划 目标 重要 简单 复杂 快速 稳定 安全 性能 提高 减少 增加
中国 北京 上海 城市 学生 老师 学校 朋友 家庭 生活 世界 历史 文化 经济 社会 发展 自然 环境 天气 春天
的 了 在 是 和 有 也 就 都 要 会 说 看 去 来 到 对 把 被 从 很 更 最 还 又 再 只
政策 投资 银行 市场 价格 消费者 企业 制造业 农业 科学 技术 研究 实验 医院 医生 疾病 健康 药物 治疗
教育 大学 考试 图书馆 博物馆 艺术 音乐 电影 小说 诗歌 传统 节日 春节 中秋 饺子 月饼 茶叶 咖啡 餐厅
旅游 飞机 火车 地铁 高速公路 交通 拥堵 空气 污染 保护 森林 河流 山脉 海洋 气候 变化 温度 降雨 干旱
法律 法院 律师 合同 权利 义务 选举 政府 部门 官员 国际 关系 合作 贸易 谈判 协议 边境 和平 战争
软件 硬件 网络 数据库 算法 接口 框架 部署 日志 监控 告警 延迟 吞吐量 并发 线程 进程 队列 事务 索引
邻居 孩子 父母 爷爷 奶奶 婚礼 生日 礼物 厨房 客厅 卧室 窗户 门口 楼梯 花园 公园 广场 街道 超市
突然 终于 居然 逐渐 偶尔 经常 从来 永远 似乎 仿佛 尽管 虽然 而且 或者 于是 然而 否则 只要 除非
`)
// Traditional characters, as written in Taiwan and Hong Kong: fewer of them are single tokens in cl100k.
const ZH_TW = words(`
我們 你們 他們 這個 那個 系統 記憶體 資料 檔案 使用者 問題 時間 已經 可以 因為 所以 但是 如果 需要
沒有 一個 工作 發現 處理 伺服器 請求 回應 快取 設定 版本 測試 結果 錯誤 原因 方法 修改 重新 啟動
完成 進行 今天 昨天 明天 公司 專案 團隊 討論 會議 計畫 目標 重要 簡單 複雜 快速 穩定 安全 效能
臺灣 臺北 香港 城市 學生 老師 學校 朋友 家庭 生活 世界 歷史 文化 經濟 社會 發展 自然 環境 天氣
的 了 在 是 和 有 也 就 都 要 會 說 看 去 來 到 對 把 被 從 很 更 最 還 又 再 只 這樣 那麼 為什麼
銀行 市場 價格 醫院 醫生 疾病 健康 藥物 教育 大學 考試 圖書館 藝術 音樂 電影 傳統 節日 餐廳 旅遊
飛機 火車 捷運 交通 空氣 污染 保護 森林 河流 氣候 變化 溫度 法律 律師 選舉 政府 國際 關係 貿易
`)
const JA = words(`
私 あなた 彼 これ それ あれ システム メモリ データ ファイル ユーザー 問題 時間 すでに できる
ため しかし もし 必要 ない 一つ 仕事 発見 処理 サーバー リクエスト キャッシュ 設定 バージョン テスト
結果 エラー 原因 方法 変更 再起動 完了 今日 昨日 明日 会社 プロジェクト チーム 会議 計画 目標 重要
簡単 複雑 安定 安全 性能 東京 大阪 学生 先生 学校 友達 家族 生活 世界 歴史 文化 経済 社会 自然 天気
政府 選挙 法律 裁判所 契約 銀行 市場 価格 投資 企業 工場 農業 科学 技術 研究 実験 病院 医者 病気
健康 薬 治療 教育 大学 試験 図書館 博物館 美術 音楽 映画 小説 伝統 祭り 正月 お寿司 ラーメン 喫茶店
旅行 飛行機 新幹線 地下鉄 道路 交通 渋滞 空気 汚染 保護 森 川 山 海 気候 変化 温度 雨 雪 桜 紅葉
近所 子供 両親 祖父 祖母 結婚式 誕生日 贈り物 台所 居間 寝室 窓 玄関 階段 庭 公園 駅 商店街 スーパー
突然 ついに 徐々に 時々 いつも 決して 永遠に まるで ところが それでも さらに または つまり ただし
データベース アルゴリズム インターフェース フレームワーク デプロイ ログ 監視 アラート 遅延 スレッド
`)
const JA_PARTICLES = words(`は が を に で と の も から まで です ます でした ました ません ている という について`)
const KO = words(`
우리 당신 그들 이것 그것 시스템 메모리 데이터 파일 사용자 문제 시간 이미 할 수 있다 왜냐하면
그래서 하지만 만약 필요 없다 하나 작업 발견 처리 서버 요청 응답 캐시 설정 버전 테스트 결과 오류
원인 방법 변경 다시 시작 완료 오늘 어제 내일 회사 프로젝트 팀 회의 계획 목표 중요 간단 복잡 빠른
안정 안전 성능 서울 부산 학생 선생님 학교 친구 가족 생활 세계 역사 문화 경제 사회 자연 날씨 봄
정부 선거 법률 법원 계약 은행 시장 가격 투자 기업 공장 농업 과학 기술 연구 실험 병원 의사 질병
건강 약 치료 교육 대학교 시험 도서관 박물관 미술 음악 영화 소설 전통 명절 설날 추석 김치 떡볶이
여행 비행기 기차 지하철 고속도로 교통 정체 공기 오염 보호 숲 강 산 바다 기후 변화 온도 비 눈
이웃 아이들 부모님 할아버지 할머니 결혼식 생일 선물 부엌 거실 침실 창문 현관 계단 정원 공원 역
갑자기 마침내 점점 가끔 항상 결코 영원히 마치 그런데 그래도 게다가 또는 즉 다만 비록 그러나
데이터베이스 알고리즘 인터페이스 프레임워크 배포 로그 모니터링 경고 지연 스레드 프로세스 대기열
`)
const KO_ENDINGS = words(`은 는 이 가 을 를 에 에서 와 과 의 도 으로 입니다 합니다 했습니다 있습니다 없습니다`)

const chinese: Generate = (rng) => {
  let s = ""
  for (let i = rng.int(8, 25); i > 0; i--) s += rng.pick(ZH) + (rng.chance(0.1) ? "，" : "")
  return s + rng.pick(["。", "。", "？", "！"]) + (rng.chance(0.2) ? "\n" : "")
}
const japanese: Generate = (rng) => {
  let s = ""
  for (let i = rng.int(5, 15); i > 0; i--) s += rng.pick(JA) + rng.pick(JA_PARTICLES) + (rng.chance(0.1) ? "、" : "")
  return s + "。" + (rng.chance(0.2) ? "\n" : "")
}
const korean: Generate = (rng) => {
  const parts: string[] = []
  for (let i = rng.int(4, 12); i > 0; i--) parts.push(rng.pick(KO) + (rng.chance(0.7) ? rng.pick(KO_ENDINGS) : ""))
  return parts.join(" ") + ". " + (rng.chance(0.2) ? "\n" : "")
}
const chineseTraditional: Generate = (rng) => {
  let s = ""
  for (let i = rng.int(8, 25); i > 0; i--) s += rng.pick(ZH_TW) + (rng.chance(0.1) ? "，" : "") + (rng.chance(0.03) ? `「${rng.pick(ZH_TW)}」` : "")
  return s + rng.pick(["。", "。", "？"]) + (rng.chance(0.2) ? "\n" : "")
}
// Chinese as a developer writes it: Han prose with ASCII names, numbers and punctuation in between.
const chineseMixed: Generate = (rng) => {
  let s = ""
  for (let i = rng.int(6, 18); i > 0; i--) {
    s += rng.pick(ZH)
    if (rng.chance(0.12)) s += ` ${rng.pick(IDENT)}${rng.chance(0.3) ? "()" : ""} `
    if (rng.chance(0.06)) s += String(rng.int(1, 5000))
    if (rng.chance(0.08)) s += rng.pick(["，", "、", "：", "（", "）"])
  }
  return s + "。" + (rng.chance(0.3) ? "\n" : "")
}

// ---- Emoji ----

const EMOJI = [..."😀😂🥲😍🤔😅🙏👍👎🔥✨🎉🚀💡⚠️✅❌📦🐛🔧🧪📈📉🕐💾🌍🍕🐍🦀☕️❤️💔🤖👀🙈"]
const ZWJ = ["👨‍👩‍👧‍👦", "👩‍💻", "🧑‍🔬", "🏳️‍🌈", "👨‍🚀", "🐻‍❄️", "❤️‍🔥", "👩‍❤️‍👨", "🧑‍🤝‍🧑"]
const SKIN = ["👍🏻", "👋🏽", "🙌🏿", "✌🏼", "🤝🏾", "👏🏽", "💪🏻"]
const FLAGS = ["🇺🇸", "🇯🇵", "🇫🇷", "🇩🇪", "🇧🇷", "🇮🇳", "🇺🇦", "🇨🇦", "🇰🇷", "🇪🇺"]

const emojiChat: Generate = (rng) => sentence(rng, COMMON, 3, 10).replace(/ /g, () => (rng.chance(0.25) ? ` ${rng.pick(EMOJI)} ` : " ")) + ` ${rng.pick(EMOJI)}\n`
const emojiDense: Generate = (rng) => Array.from({ length: rng.int(5, 20) }, () => rng.pick(EMOJI)).join("") + "\n"
const emojiSequences: Generate = (rng) => Array.from({ length: rng.int(3, 10) }, () => rng.pick([...ZWJ, ...SKIN, ...FLAGS])).join(rng.chance(0.5) ? " " : "") + "\n"

// ---- Other scripts ----

const RU = words(`система память данные файл пользователь проблема время уже можно потому поэтому но если нужно нет один работа
найти обработка сервер запрос ответ кэш настройка версия тест результат ошибка причина способ изменить снова запуск
сегодня вчера завтра компания проект команда встреча план цель важный простой сложный быстрый безопасный и в не на я что`)
const EL = words(`σύστημα μνήμη δεδομένα αρχείο χρήστης πρόβλημα χρόνος ήδη μπορεί επειδή αλλά αν χρειάζεται όχι ένα εργασία
διακομιστής αίτημα απάντηση ρύθμιση έκδοση δοκιμή αποτέλεσμα σφάλμα αιτία σήμερα αύριο εταιρεία ομάδα και το της να για`)
const AR = words(`النظام الذاكرة البيانات الملف المستخدم المشكلة الوقت بالفعل يمكن لأن لذلك لكن إذا يجب لا واحد العمل الخادم
الطلب الاستجابة الإعدادات الإصدار الاختبار النتيجة الخطأ السبب اليوم أمس غدا الشركة المشروع الفريق في من على إلى و هذا`)
const HI = words(`प्रणाली स्मृति डेटा फ़ाइल उपयोगकर्ता समस्या समय पहले से सकते क्योंकि इसलिए लेकिन अगर चाहिए नहीं एक काम सर्वर
अनुरोध उत्तर सेटिंग संस्करण परीक्षण परिणाम त्रुटि कारण आज कल कंपनी परियोजना टीम और का की के में है हैं यह वह`)
const LATIN = words(`être déjà système mémoire données réseau à côté façon naïve élève très Straße größer Übung Mädchen schön für
über café niño año señor información acción español jõe mañana Łódź źródło żółć gęś ćma příliš žluťoučký kůň úpěl
ďábelské ódy Tiếng Việt người được những không của một đã cũng với và để này có thể Ελλάδα São Paulo coração ação`)

const HE = words(`שלום מערכת זיכרון נתונים קובץ משתמש בעיה זמן כבר אפשר כי לכן אבל אם צריך אין אחד עבודה שרת בקשה
תשובה הגדרה גרסה בדיקה תוצאה שגיאה סיבה היום אתמול מחר חברה פרויקט צוות פגישה תוכנית מטרה חשוב פשוט מורכב
מהיר יציב בטוח ירושלים תל אביב ספר בית ילדים משפחה עיר ו של את על זה הוא היא לא גם עם מה כל יותר אנחנו`)
// Thai writes words without spaces between them; spaces separate phrases.
const TH = words(`ระบบ หน่วยความจำ ข้อมูล ไฟล์ ผู้ใช้ ปัญหา เวลา แล้ว สามารถ เพราะ ดังนั้น แต่ ถ้า ต้องการ ไม่มี หนึ่ง งาน
เซิร์ฟเวอร์ คำขอ การตอบสนอง การตั้งค่า รุ่น การทดสอบ ผลลัพธ์ ข้อผิดพลาด สาเหตุ วันนี้ เมื่อวาน พรุ่งนี้ บริษัท
โครงการ ทีม การประชุม แผน เป้าหมาย สำคัญ ง่าย ซับซ้อน เร็ว กรุงเทพ โรงเรียน ครอบครัว และ ของ ที่ ใน เป็น มี ได้ จะ ให้ กับ`)
const DE = words(`der die das und ist nicht mit für auf dem den ein eine werden wurde kann muss soll sich auch noch nach
Datei Benutzer Fehler Verbindung Speicher Zeitüberschreitung Einstellungen Überprüfung Ergebnis Änderung Grund heute
gestern morgen Unternehmen Projekt Mannschaft Besprechung wichtig einfach schwierig schnell sicher größer Straße
Prüfung Schlüssel Verzeichnis Anwendung Entwicklung Umgebung Sicherheitslücke Aktualisierung Bereitstellung
Wiederherstellung zuverlässig gleichzeitig möglicherweise tatsächlich übernehmen Bahnhof Frühling Gemüse Käse`)
const FR = words(`le la les de des du un une et est pas pour avec sur dans que qui ce cette fichier utilisateur erreur
connexion mémoire délai paramètres vérification résultat modification raison aujourd'hui hier demain entreprise
projet équipe réunion important simple difficile rapide sécurité déjà très où être été après même déploiement
répertoire clé mise à jour fiabilité développement environnement château forêt hôpital garçon leçon français noël`)
const ES = words(`el la los las de del un una y es no para con en que este archivo usuario error conexión memoria tiempo
configuración verificación resultado cambio razón hoy ayer mañana empresa proyecto equipo reunión importante
sencillo difícil rápido seguridad también después año niño está están aquí así función versión actualización
servidor pequeño corazón árbol canción ciudad música información según todavía`)
const PL = words(`i w na z do się nie jest że to jak ale dla od po przez plik użytkownik błąd połączenie pamięć czas
ustawienia sprawdzenie wynik zmiana przyczyna dzisiaj wczoraj jutro firma projekt zespół spotkanie ważny prosty
trudny szybki bezpieczeństwo już bardzo gdzie być został także wdrożenie katalog klucz aktualizacja niezawodność
środowisko źródło żółty książka miasto rzeka wieś dziękuję proszę`)
const VI = words(`và của là có không được cho với trong này một những các người đã sẽ để khi tệp người dùng lỗi kết nối
bộ nhớ thời gian cài đặt kiểm tra kết quả thay đổi lý do hôm nay hôm qua ngày mai công ty dự án nhóm cuộc họp
quan trọng đơn giản khó khăn nhanh an toàn máy chủ phiên bản Việt Nam Hà Nội thành phố gia đình trường học`)

const IT = words(`il lo la gli le di del della un una e è non per con su nel che questo questa file utente errore connessione
memoria tempo impostazioni verifica risultato modifica motivo oggi ieri domani azienda progetto squadra riunione importante
semplice difficile veloce sicurezza già molto dove essere stato dopo città perché così più può aggiornamento distribuzione`)
const PT = words(`o a os as de do da um uma e é não para com em que este esta arquivo usuário erro conexão memória tempo
configuração verificação resultado alteração razão hoje ontem amanhã empresa projeto equipe reunião importante simples
difícil rápido segurança já muito onde ser foi depois também função versão atualização servidor coração informação`)
const NL = words(`de het een en is niet voor met op in dat dit deze bestand gebruiker fout verbinding geheugen tijd instellingen
controle resultaat wijziging reden vandaag gisteren morgen bedrijf project team vergadering belangrijk eenvoudig moeilijk
snel veiligheid al heel waar zijn geweest daarna ook functie versie bijwerken ongeldig verwacht waarde ontvangen`)
const SV = words(`och att det som en är inte för med på av till den detta fil användare fel anslutning minne tid inställningar
kontroll resultat ändring orsak idag igår imorgon företag projekt lag möte viktigt enkel svår snabb säkerhet redan mycket
var vara varit efter också funktion version uppdatering ogiltig förväntade värde mottog`)
const DA = words(`og at det som en er ikke for med på af til den denne fil bruger fejl forbindelse hukommelse tid indstillinger
kontrol resultat ændring årsag i dag i går i morgen virksomhed projekt hold møde vigtig enkel svær hurtig sikkerhed allerede
meget hvor være været efter også funktion version opdatering ugyldig forventede værdi modtog nøgle`)
const FI = words(`ja on ei että se tämä tiedosto käyttäjä virhe yhteys muisti aika asetukset tarkistus tulos muutos syy tänään
eilen huomenna yritys projekti tiimi kokous tärkeä yksinkertainen vaikea nopea turvallisuus jo hyvin missä olla ollut jälkeen
myös funktio versio päivitys virheellinen odotettiin arvo vastaanotettu avain merkkijono`)
const CS = words(`a je není pro s na v že to tento soubor uživatel chyba připojení paměť čas nastavení kontrola výsledek změna
důvod dnes včera zítra společnost projekt tým schůzka důležitý jednoduchý obtížný rychlý bezpečnost už velmi kde být byl
potom také funkce verze aktualizace neplatný očekáváno hodnota přijato klíč řetězec`)
const TR = words(`ve bir bu için ile değil da de ne dosya kullanıcı hata bağlantı bellek zaman ayarlar kontrol sonuç değişiklik
neden bugün dün yarın şirket proje takım toplantı önemli basit zor hızlı güvenlik zaten çok nerede olmak oldu sonra ayrıca
fonksiyon sürüm güncelleme geçersiz beklenen değer alındı anahtar dizgi`)

const scriptProse = (list: readonly string[], stop: string, joiner = " "): Generate => (rng) => {
  const parts: string[] = []
  for (let i = rng.int(5, 16); i > 0; i--) parts.push(rng.pick(list) + (rng.chance(0.08) ? "," : "") + (rng.chance(0.03) ? ` ${rng.int(2, 2030)}` : ""))
  return parts.join(joiner === " " || rng.chance(0.5) ? " " : joiner) + stop + (rng.chance(0.2) ? "\n" : " ")
}

// ---- Whitespace ----

const indented: Generate = (rng) => {
  const depth = rng.int(0, 10)
  const unit = rng.pick(["  ", "    ", "\t"])
  return `${unit.repeat(depth)}${rng.pick(["<div", "if (", "- name:", "return", "}", "</span>", "case"])} ${camel(rng, 1)}${rng.chance(0.3) ? "   " : ""}\n${rng.chance(0.2) ? "\n\n" : ""}`
}
const alignedTable: Generate = (rng) => {
  const cols = Array.from({ length: rng.int(3, 6) }, () => {
    const cell = rng.chance(0.5) ? camel(rng, 1) : String(rng.int(0, 99999))
    return cell + " ".repeat(rng.int(1, 24))
  })
  return cols.join("") + "\n"
}
const spaceRuns: Generate = (rng) => `${" ".repeat(rng.int(0, 120))}${rng.pick(COMMON)}${rng.chance(0.3) ? "\t\t\t" : ""}${" ".repeat(rng.int(0, 40))}${rng.chance(0.4) ? "\n" : ""}${rng.chance(0.1) ? "\n".repeat(rng.int(2, 8)) : ""}`

// ---- Stack traces ----

const nodeTrace: Generate = (rng) => {
  const lines = [`${pascal(rng, 1)}Error: ${sentence(rng, TECHNICAL, 3, 8).slice(0, -1)}`]
  for (let i = rng.int(4, 12); i > 0; i--) {
    lines.push(rng.chance(0.3)
      ? `    at ${rng.pick(["Module._compile", "Object.<anonymous>", "process.processTicksAndRejections", "async Promise.all"])} (node:internal/${rng.pick(["modules/cjs/loader", "process/task_queues", "timers"])}:${rng.int(1, 2000)}:${rng.int(1, 80)})`
      : `    at ${pascal(rng, 1)}.${camel(rng, 2)} (/srv/app/${filePath(rng).replace(/\.\w+$/, ".js")}:${rng.int(1, 900)}:${rng.int(1, 120)})`)
  }
  return lines.join("\n") + "\n"
}
const pythonTrace: Generate = (rng) => {
  const lines = ["Traceback (most recent call last):"]
  for (let i = rng.int(3, 8); i > 0; i--) {
    lines.push(`  File "/usr/lib/python3.12/site-packages/${snake(rng, 1)}/${snake(rng, 1)}.py", line ${rng.int(1, 2000)}, in ${snake(rng, 2)}`)
    lines.push(`    ${snake(rng, 1)} = self.${snake(rng, 2)}(${snake(rng, 1)}, timeout=${rng.int(1, 60)})`)
  }
  lines.push(`${rng.pick(["KeyError", "ValueError", "ConnectionResetError", "TimeoutError"])}: '${snake(rng, 2)}'`)
  return lines.join("\n") + "\n"
}
const javaTrace: Generate = (rng) => {
  const pkg = `com.${rng.pick(IDENT)}.${rng.pick(IDENT)}`
  const lines = [`Exception in thread "main" java.lang.${rng.pick(["NullPointerException", "IllegalStateException", "IndexOutOfBoundsException"])}: ${sentence(rng, TECHNICAL, 2, 6).slice(0, -1)}`]
  for (let i = rng.int(5, 15); i > 0; i--) {
    const cls = pascal(rng, 2)
    lines.push(`\tat ${pkg}.${cls}.${camel(rng, 2)}(${cls}.java:${rng.int(10, 999)})`)
  }
  lines.push(`\t... ${rng.int(3, 40)} more`)
  return lines.join("\n") + "\n"
}
const goPanic: Generate = (rng) => {
  const lines = [`panic: runtime error: ${rng.pick(["invalid memory address or nil pointer dereference", "index out of range [5] with length 3"])}`, `[signal SIGSEGV: segmentation violation code=0x1 addr=0x${hex(rng, 2)} pc=0x${hex(rng, 7)}]`, "", `goroutine ${rng.int(1, 400)} [running]:`]
  for (let i = rng.int(3, 8); i > 0; i--) {
    lines.push(`github.com/${rng.pick(IDENT)}/${rng.pick(IDENT)}/${rng.pick(DIRS)}.(*${pascal(rng, 1)}).${pascal(rng, 2)}(0xc000${hex(rng, 6)}, 0x${hex(rng, 2)})`)
    lines.push(`\t/go/src/${rng.pick(IDENT)}/${rng.pick(DIRS)}/${snake(rng, 1)}.go:${rng.int(10, 900)} +0x${hex(rng, 3)}`)
  }
  return lines.join("\n") + "\n\n"
}

// ---- Transcript (as a chat is rendered for a model: prose, tool calls, outputs) ----

const transcript: Generate = (rng) => {
  const blocks: Generate[] = [
    (r) => `[user]\n${paragraphOf(r, [...COMMON, ...TECHNICAL], 5, 16)}`,
    (r) => `[assistant]\n${englishWritten(r)}${r.chance(0.5) ? "```ts\n" + codeTs(r) + "```\n" : ""}\n`,
    (r) => `[tool bash] {"command":"sha256sum dist/*"}\n${Array.from({ length: r.int(2, 8) }, () => sha256Lines(r)).join("")}\n`,
    (r) => `[tool bash] {"command":"kubectl logs deploy/api --tail=20"}\n${Array.from({ length: r.int(3, 12) }, () => timestampLog(r)).join("")}\n`,
    (r) => `[tool read] {"filePath":"src/${r.pick(IDENT)}.py"}\n${codePython(r)}\n`,
    (r) => `[tool bash] {"command":"npm test"}\n${nodeTrace(r)}\n`,
    (r) => `[tool write] ${jsonCompact(r)}\n`,
    (r) => `[tool bash] {"command":"git log --oneline -5"}\n${Array.from({ length: 5 }, () => gitLog(r)).join("")}\n`,
  ]
  return rng.pick(blocks)(rng)
}

// A debugging session: diffs, test runs, installs, a non-English user now and then.
const transcriptDebugging: Generate = (rng) => {
  const blocks: Generate[] = [
    (r) => `[user]\n${r.chance(0.2) ? chinese(r) + "\n" : r.chance(0.2) ? scriptProse(DE, ".")(r) + "\n" : englishWritten(r)}\n`,
    (r) => `[assistant]\n${paragraphOf(r, [...COMMON, ...TECHNICAL], 6, 20)}`,
    (r) => {
      const file = `src/${r.pick(DIRS)}/${snake(r, 1)}.ts`
      const lines = Array.from({ length: r.int(3, 10) }, () => `${r.pick(["+", "-", " "])}  ${r.chance(0.5) ? `const ${camel(r, 2)} = ${camel(r, 1)}(${r.int(0, 99)})` : `// ${sentence(r, COMMON, 3, 8)}`}`)
      return `[tool bash] {"command":"git diff ${file}"}\ndiff --git a/${file} b/${file}\nindex ${hex(r, 7)}..${hex(r, 7)} 100644\n--- a/${file}\n+++ b/${file}\n@@ -${r.int(1, 400)},${r.int(3, 9)} +${r.int(1, 400)},${r.int(3, 9)} @@\n${lines.join("\n")}\n\n`
    },
    (r) => `[tool bash] {"command":"npx vitest run"}\n ✓ test/${snake(r, 1)}.test.ts (${r.int(2, 40)} tests) ${r.int(10, 900)}ms\n × test/${snake(r, 1)}.test.ts > ${sentence(r, TECHNICAL, 3, 6).slice(0, -1)}\n   AssertionError: expected ${r.int(0, 99)} to be ${r.int(0, 99)}\n${nodeTrace(r)}\n Test Files  1 failed | ${r.int(1, 60)} passed\n\n`,
    (r) => `[tool bash] {"command":"npm install"}\nadded ${r.int(1, 900)} packages, and audited ${r.int(100, 2000)} packages in ${r.int(1, 59)}s\n\n${r.int(10, 200)} packages are looking for funding\n  run \`npm fund\` for details\n\nfound 0 vulnerabilities\n\n`,
    (r) => `[tool read] {"filePath":"package-lock.json"}\n${packageLock(r)}\n`,
  ]
  return rng.pick(blocks)(rng)
}

// ---- Random printable ASCII, URLs and paths ----

const randomAscii: Generate = (rng) => {
  let s = ""
  for (let i = rng.int(40, 200); i > 0; i--) s += String.fromCharCode(rng.int(32, 126))
  return s + "\n"
}
const randomAlnum: Generate = (rng) => rng.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", rng.int(16, 64)) + rng.pick([" ", "\n", "_", "-"])
const urls: Generate = (rng) => {
  const host = `${rng.pick(["api", "www", "cdn", "docs", "auth"])}.${rng.chance(0.5) ? pseudoWord(rng) : rng.pick(IDENT)}${rng.pick(["", "-prod", "s"])}.${rng.pick(["com", "io", "dev", "org", "net"])}`
  const p = Array.from({ length: rng.int(1, 5) }, () => (rng.chance(0.2) ? String(rng.int(1, 99999)) : rng.pick([...IDENT, ...DIRS]))).join("/")
  const q = rng.chance(0.6) ? `?${snake(rng, 1)}=${rng.chance(0.5) ? hex(rng, 12) : camel(rng, 1)}&page=${rng.int(1, 50)}${rng.chance(0.3) ? `&utm_source=${rng.pick(IDENT)}` : ""}` : ""
  return `https://${host}/${p}${q}\n`
}
const paths: Generate = (rng) => {
  const k = rng.int(0, 2)
  if (k === 0) return `/home/${rng.pick(IDENT)}/${filePath(rng)}\n`
  if (k === 1) return `C:\\Users\\${pascal(rng, 1)}\\AppData\\Local\\${pascal(rng, 2)}\\${rng.pick(FILES)}\n`
  return `./${filePath(rng)}:${rng.int(1, 999)}:${rng.int(1, 80)}\n`
}

const GENERATORS: Array<[cls: string, name: string, generate: Generate, kilobytes: number]> = [
  ["english", "common", englishCommon, 12],
  ["english", "technical", englishTechnical, 10],
  ["english", "rare-words", englishRare, 8],
  ["english", "written", englishWritten, 10],
  ["english", "markdown", englishMarkdown, 8],
  ["english", "typographic", englishTypographic, 8],
  ["code", "typescript", codeTs, 10],
  ["code", "python", codePython, 10],
  ["code", "go", codeGo, 10],
  ["code", "shell", codeShell, 8],
  ["json", "pretty", jsonPretty, 10],
  ["json", "compact", jsonCompact, 10],
  ["minified-js", "bundle", minifiedJs, 10],
  ["minified-js", "modules", minifiedBundle, 10],
  ["lockfile", "package-lock", packageLock, 10],
  ["lockfile", "yarn", yarnLock, 8],
  ["lockfile", "cargo", cargoLock, 8],
  ["hex", "sha256sum", sha256Lines, 10],
  ["hex", "git-log", gitLog, 6],
  ["hex", "bare", bareHex, 6],
  ["hex", "hexdump", hexDump, 8],
  ["hex", "upper", upperHex, 4],
  ["base64", "wrapped", base64Wrapped, 10],
  ["base64", "long-line", base64Long, 8],
  ["base64", "base64url", base64Url, 8],
  ["base64", "jwt", jwt, 6],
  ["numbers", "timestamp-log", timestampLog, 10],
  ["numbers", "csv-floats", csvFloats, 8],
  ["numbers", "csv-integers", csvIntegers, 8],
  ["numbers", "metrics", metrics, 6],
  ["cjk", "chinese", chinese, 8],
  ["cjk", "japanese", japanese, 8],
  ["cjk", "korean", korean, 8],
  ["cjk", "chinese-traditional", chineseTraditional, 8],
  ["cjk", "chinese-mixed", chineseMixed, 8],
  ["emoji", "chat", emojiChat, 6],
  ["emoji", "dense", emojiDense, 6],
  ["emoji", "sequences", emojiSequences, 6],
  ["scripts", "cyrillic", scriptProse(RU, "."), 8],
  ["scripts", "greek", scriptProse(EL, "."), 8],
  ["scripts", "arabic", scriptProse(AR, "."), 8],
  ["scripts", "devanagari", scriptProse(HI, "।"), 8],
  ["scripts", "hebrew", scriptProse(HE, "."), 6],
  ["scripts", "thai", scriptProse(TH, " ", ""), 6],
  ["scripts", "accented-latin", scriptProse(LATIN, "."), 6],
  ["scripts", "german", scriptProse(DE, "."), 6],
  ["scripts", "french", scriptProse(FR, "."), 6],
  ["scripts", "spanish", scriptProse(ES, "."), 6],
  ["scripts", "polish", scriptProse(PL, "."), 6],
  ["scripts", "vietnamese", scriptProse(VI, "."), 6],
  ["scripts", "italian", scriptProse(IT, "."), 5],
  ["scripts", "portuguese", scriptProse(PT, "."), 5],
  ["scripts", "dutch", scriptProse(NL, "."), 5],
  ["scripts", "swedish", scriptProse(SV, "."), 5],
  ["scripts", "danish", scriptProse(DA, "."), 5],
  ["scripts", "finnish", scriptProse(FI, "."), 5],
  ["scripts", "czech", scriptProse(CS, "."), 5],
  ["scripts", "turkish", scriptProse(TR, "."), 5],
  ["whitespace", "indented", indented, 8],
  ["whitespace", "aligned-table", alignedTable, 8],
  ["whitespace", "space-runs", spaceRuns, 8],
  ["stack-trace", "node", nodeTrace, 8],
  ["stack-trace", "python", pythonTrace, 8],
  ["stack-trace", "java", javaTrace, 8],
  ["stack-trace", "go", goPanic, 8],
  ["transcript", "chat", transcript, 24],
  ["transcript", "debugging", transcriptDebugging, 20],
  ["random-ascii", "printable", randomAscii, 6],
  ["random-ascii", "alnum", randomAlnum, 6],
  ["urls-paths", "urls", urls, 8],
  ["urls-paths", "paths", paths, 8],
]
