// How many tokens a model's tokenizer makes of a text, estimated without one.
//
// Why not a real tokenizer: gpt-tokenizer is 30 MB installed, over the plugin's 20 MB install
// budget; it encodes 4-8 MB/s here (o200k_base), this estimator about 100 MB/s; and it counts in
// one encoding, while budgets are sized for models on either: cl100k_base makes 1.5-1.8x
// o200k_base's tokens of Chinese, Japanese or Korean, up to 1.5x of emoji, 2.6-3.8x of Greek,
// Arabic, Hebrew or Devanagari, so a count in o200k would overflow a cl100k model by that much.
//
// Why not "a token = 4 UTF-8 bytes": prose takes 4.6 bytes a token (o200k), but decimal numbers
// 2.2, hex digests 1.9 and base64 1.5, so digest-, log- and blob-heavy transcripts would overflow
// a window by 2-2.7x.
//
// What it does: it cuts the text into runs as both tokenizers pre-split it (letters, with a new
// run where a lower-case letter meets an upper-case one; digits; spaces; newlines; punctuation;
// non-ASCII) and adds up a cost per run, calibrated against the worse of the two encodings on
// each kind of text (samples: scripts/bench/token-corpus.ts; fit: `npm run bench -- tokens`).
// A run's cost may depend on the character before it (a word after a space shares the space's
// token), never on one after it; a run at the start of a text costs what it would cost after
// anything; and a run cut in two never costs less than the whole. So the estimate of a prefix
// only grows, estimateTokens(a + b) <= estimateTokens(a) + estimateTokens(b) for any split (callers
// add up the estimates of blocks), and, costs being integer units, headWithin and tailWithin are
// exact in one pass.
//
// Known limit: a Latin-script language whose words carry few diacritics and end like English
// ones can come out under cl100k, whose English-made merges split it finely: Lithuanian 0.90 of
// cl100k in a check on real text; o200k splits such words less (1.19).

/** Tokens `text` is estimated to take. Never far below o200k_base's or cl100k_base's count. */
export function estimateTokens(text: string): number {
  return Math.ceil(scan(text, -1) / UNIT)
}

/**
 * The largest index `i` at a code point boundary with estimateTokens(text.slice(0, i)) <= maxTokens
 * (the estimate of a prefix never shrinks as it grows, so the next boundary would exceed it).
 */
export function headWithin(text: string, maxTokens: number): number {
  if (!(maxTokens > 0)) return 0
  return -1 - scan(text, Math.min(Math.floor(maxTokens) * UNIT, Number.MAX_VALUE))
}

/**
 * The smallest index `i` at a code point boundary with estimateTokens(text.slice(i)) <= maxTokens:
 * the longest suffix within the budget, so the suffix one code point longer exceeds it.
 */
export function tailWithin(text: string, maxTokens: number): number {
  if (!(maxTokens > 0)) return text.length
  return scanBack(text, Math.floor(maxTokens) * UNIT)
}

// ---- Units, classes, contexts ----

/** Cost units per token: integer sums keep every estimate, and so head and tail, exact. */
const UNIT = 1000
const u = (tokens: number) => Math.round(tokens * UNIT)

// What a UTF-16 unit is. A surrogate pair is one OTHER code point.
const LOWER = 0
const UPPER = 1
const DIGIT = 2
const SPACE = 3
const TAB = 4 // tab, vertical tab, form feed
const NEWLINE = 5 // \n, \r
const PUNCT = 6 // printable ASCII that is not a letter, digit or space
const CONTROL = 7
const OTHER = 8

// What comes before a run, which is all of its context a run's cost may use.
const AFTER_SPACE = 0
const AFTER_PUNCT = 1
const AFTER_BREAK = 2 // a digit, newline or control character: a run with no prefix to share
const AFTER_LETTER = 3
const AFTER_OTHER = 4
const AT_START = 5 // the text starts with the run: the most any context could cost, see START_*

const CONTEXT_OF_CLASS = [AFTER_LETTER, AFTER_LETTER, AFTER_BREAK, AFTER_SPACE, AFTER_SPACE, AFTER_BREAK, AFTER_PUNCT, AFTER_BREAK, AFTER_OTHER]

const ASCII_CLASS = (() => {
  const classes = new Uint8Array(128)
  for (let c = 0; c < 128; c++) {
    classes[c] =
      c >= 97 && c <= 122 ? LOWER
      : c >= 65 && c <= 90 ? UPPER
      : c >= 48 && c <= 57 ? DIGIT
      : c === 32 ? SPACE
      : c === 9 || c === 11 || c === 12 ? TAB
      : c === 10 || c === 13 ? NEWLINE
      : c > 32 && c < 127 ? PUNCT
      : CONTROL
  }
  return classes
})()

// ---- Calibrated costs, in tokens (fit: `npm run bench -- tokens`) ----

// A letter run costs max(1, FIRST + SCALE * pairs) - CREDIT, by context (after a space,
// punctuation, a digit or line break, a letter, a non-ASCII character), where `pairs` adds up
// one weight per adjacent pair of letters in the run. After a space the space's own token is
// the word's (CREDIT 1): " word" is one token, and so is a long common word; a run after a digit
// (hex, base64) has nothing to share. Pairs common inside English words are cheap, rare ones
// cost about what a random string does.
const LETTER_FIRST = [0.827, 0.767, 1.231, 1.288, 1.194].map(u)
const LETTER_SCALE = [0.956, 0.505, 0.846, 1, 1]
const LETTER_CREDIT = [1, 0.537, 0, 0, 0.986].map(u)
const PAIR_COMMON = u(0.076)
const PAIR_RARE = u(1)
const UPPER_PAIR_COMMON = u(0.284)
const UPPER_PAIR_RARE = u(1)
// Words ending the way Romance, Baltic and Germanic words do (-a, -o, -i, -u; -en) take two or
// three cl100k tokens where an English word of the same length takes one; English rarely ends
// so (0-2% of its words of four letters or more, against 20-50% of Spanish, Italian, German,
// Dutch or Lithuanian ones). Charged to the character after the word, once it is known to end.
const FOREIGN_VOWEL_END = u(1.3)
const FOREIGN_EN_END = u(2)
// Digits go in threes in both tokenizers; after a letter (hex, base64) a little more.
const DIGITS_AFTER_LETTER = u(0.054)
// Punctuation: a token, plus a weight per pair (common pairs like "()" or "=>" merge). A space
// before it joins its token.
const PUNCT_PAIR_COMMON = u(0.183)
const PUNCT_PAIR_RARE = u(1.061)
const PUNCT_CREDIT_AFTER_SPACE = u(0.858)
// Whitespace runs merge: up to 64 spaces, 16 tabs or 8 newlines make one token; a newline after
// a space or punctuation shares its token.
const SPACES_PER_TOKEN = 64
const TABS_PER_TOKEN = 16
const NEWLINES_PER_TOKEN = 8
const NEWLINE_CREDIT = [1, 1, 0, 0, 0].map(u)
// Non-ASCII: each code point costs its block's weight (below); a run of them starts with
// OTHER_START more, less a part of a space's token before it.
const OTHER_START = u(0.457)
const OTHER_CREDIT_AFTER_SPACE = u(0.675)

// Per block of code points: what a code point costs in text of that script, the worse of the two
// encodings. Fit on text where the corpus has it; elsewhere about 0.8 of what one such character
// costs alone in cl100k (runs of them merge a little).
const BLOCK_COSTS: Array<[first: number, last: number, tokens: number]> = [
  [0x0080, 0x00bf, 1.2], // Latin-1 punctuation and symbols
  [0x00c0, 0x00ff, 1.8], // Latin-1 letters: é ü ñ ø
  [0x0100, 0x017f, 1.42], // Latin Extended-A: ł ś ž ő
  [0x0180, 0x024f, 1], // Latin Extended-B (Vietnamese ơ ư)
  [0x0250, 0x02ff, 1.6], // IPA, spacing modifiers
  [0x0300, 0x036f, 0.9], // combining diacritics
  [0x0370, 0x03ff, 0.95], // Greek
  [0x0400, 0x04ff, 0.54], // Cyrillic
  [0x0500, 0x052f, 1.6],
  [0x0530, 0x058f, 1.5], // Armenian
  [0x0590, 0x05ff, 1.1], // Hebrew
  [0x0600, 0x066f, 0.74], // Arabic
  [0x0670, 0x06ff, 1.6], // Arabic letters of Persian and Urdu
  [0x0700, 0x08ff, 2],
  [0x0900, 0x097f, 1.13], // Devanagari
  [0x0980, 0x0b7f, 1.8], // Bengali, Gurmukhi, Gujarati, Oriya
  [0x0b80, 0x0bff, 1.48], // Tamil
  [0x0c00, 0x0dff, 1.6], // Telugu, Kannada, Malayalam, Sinhala
  [0x0e00, 0x0e7f, 0.96], // Thai
  [0x0e80, 0x109f, 2], // Lao, Tibetan, Myanmar
  [0x10a0, 0x10ff, 2.17], // Georgian
  [0x1100, 0x11ff, 2.4], // Hangul jamo
  [0x1200, 0x177f, 2.3], // Ethiopic, Cherokee, Canadian syllabics, ...
  [0x1780, 0x17ff, 1.7], // Khmer
  [0x1800, 0x1dff, 2.4],
  [0x1e00, 0x1eff, 0.8], // Latin Extended Additional (Vietnamese)
  [0x1f00, 0x1fff, 2.4], // Greek Extended
  [0x2000, 0x200f, 1.82], // spaces and zero-width joiners
  [0x2010, 0x206f, 1.3], // dashes, quotes, ellipsis
  [0x2070, 0x218f, 1.6], // super- and subscripts, currency, letterlike
  [0x2190, 0x22ff, 2], // arrows, mathematical operators
  [0x2300, 0x24ff, 2.3], // technical symbols, enclosed alphanumerics
  [0x2500, 0x257f, 1], // box drawing
  [0x2580, 0x25ff, 1.5], // blocks, geometric shapes
  [0x2600, 0x27bf, 1.59], // symbols and dingbats: ✅ ⚠ ☕
  [0x27c0, 0x2fff, 2.4],
  [0x3000, 0x303f, 0.9], // CJK punctuation
  [0x3040, 0x30ff, 0.9], // kana
  [0x3100, 0x33ff, 2.3],
  [0x3400, 0x4dff, 2.4], // CJK extension A
  [0x4e00, 0x9fff, 1.6], // CJK unified ideographs
  [0xa000, 0xabff, 2.4],
  [0xac00, 0xd7af, 0.99], // Hangul syllables
  [0xd7b0, 0xd7ff, 2.4],
  [0xd800, 0xdfff, 2.4], // an unpaired surrogate (encoded as U+FFFD)
  [0xe000, 0xf8ff, 2.4], // private use (icon fonts)
  [0xf900, 0xfaff, 2.4],
  [0xfb00, 0xfdff, 2.4],
  [0xfe00, 0xfe0f, 0.8], // variation selectors
  [0xfe10, 0xfeff, 2],
  [0xff00, 0xffef, 2.47], // full-width forms
  [0xfff0, 0xffff, 1.6],
]
const ASTRAL_COSTS: Array<[first: number, last: number, tokens: number]> = [
  [0x1f1e6, 0x1f1ff, 3.18], // regional indicators: a flag is two
  [0x1f3fb, 0x1f3ff, 2.31], // skin tones
  [0x1f000, 0x1faff, 3], // emoji
  [0x20000, 0x3ffff, 3.5], // CJK extensions B and later
  [0xe0000, 0xe007f, 1.5], // tags (subdivision flags)
]
const ASTRAL_DEFAULT = u(3.5)

// Pairs common inside single-token words of o200k_base and cl100k_base (" word"): the 300 most
// frequent there, less "ij" and "aa", which mark Dutch and Finnish words cl100k splits finely.
const COMMON_LETTER_PAIRS = `
in er en re es te on ti nt an st at ng ed ar ra le al de or co ri li ta se is it me ro io
ve ne el tr la di ic nd as pr ns ma ch si ge pe to na ce ie ca ec et ur un ac il ll ad rs
om em he os pa mi ou nc ea po ol ni lo ss am ci rt ha ct id da us im ts be ut ai sa mp ia
su do mo ig so vi fi ir no ul ho ab sc sp ap iv tu ag ke hi pl ly th ot bl ba va sh ga ei
ee eg qu op ue cu bi cr ex gr oc fe pi oo bo tt ep um au ev fo vo lu rr od wa ui ru rm rd
we gi ak br ck fa cl nn ka ef ov ua av ip lt ty pp if du ow mu og rn ki uc mb up gu ib bu
rc iz mm ry pt pu ls rg ob ze wi oi ay ht ub nu dr go ds ko fr ff eu fu je nf ud ph eb fl
gh ld ok ek sl nv of ik rk cc af tl hu ug oa za ps wo nk rv ku ew gl ks gn gs sm oe zi ju
ys sk aw ya ja bs rl xp rb ms eh jo ez hr eo sy ye ah rp dd az gg ny tc cy eq kt ft hy xt
xi dl nh rf aj oy yo ej uk ey wn lm wh sw zo yi kl uf yp nl lv ym dy tw xe yn cs iq`
// The 150 pairs most frequent inside the all-punctuation tokens of the two vocabularies.
const COMMON_PUNCT_PAIRS =
  "-- ** == // ## .. __ ); )) () \") ') (\" \", ', ]) \"\" (' %% '] \"> ++ ). ), </ =\" ./ }) .\" [] \". :: '' '. ~~ !! }} ?> {} \"; /* .' =' >< \\\" */ (( \"] ], >> -> )} ,' }, >\" ){ /. << )] }\" >( ]] ]; ;; '\" <? /> ${ )\" \"/ $( ): ,\" => >' .$ '/ \": '; [' *) /' \"' ]= {{ ={ :\" /\" )( >{ \"+ _( ?? ][ ]. ([ }> \"} ($ \"< \"\\ +\" }; (_ )[ \"# .) '} ;\" _) \"- )= '< )- \\\\ /- =- [\" @\" ]} ]\" +- =$ $_ :' \"{ ({ (* {$ }' ': \"% || ?\" '+ !\" )' +' -+ '# ;? != '= {\" \"$ #+ }` -= '{ %\""

// ---- Tables built once from the constants above ----

/** Cost units of the pair (previous ASCII char, this one) inside a letter or punctuation run. */
const PAIR_COST = (() => {
  const table = new Uint16Array(128 * 128)
  const common = new Set(COMMON_LETTER_PAIRS.trim().split(/\s+/))
  for (let a = 0; a < 128; a++) {
    for (let b = 0; b < 128; b++) {
      const ca = ASCII_CLASS[a]!
      const cb = ASCII_CLASS[b]!
      if ((ca === LOWER || ca === UPPER) && (cb === LOWER || cb === UPPER)) {
        const known = common.has(String.fromCharCode(a | 32, b | 32))
        table[a * 128 + b] = cb === UPPER ? (known ? UPPER_PAIR_COMMON : UPPER_PAIR_RARE) : known ? PAIR_COMMON : PAIR_RARE
      } else if (ca === PUNCT && cb === PUNCT) table[a * 128 + b] = PUNCT_PAIR_RARE
    }
  }
  for (const pair of COMMON_PUNCT_PAIRS.split(" ")) table[pair.charCodeAt(0) * 128 + pair.charCodeAt(1)] = PUNCT_PAIR_COMMON
  return table
})()

/** Cost units of a BMP code point, by block of 16. */
const BMP_COST = (() => {
  const table = new Uint16Array(0x10000 >> 4).fill(u(2))
  for (const [first, last, tokens] of BLOCK_COSTS) table.fill(u(tokens), first >> 4, (last >> 4) + 1)
  return table
})()
const ASTRAL = ASTRAL_COSTS.map(([first, last, tokens]) => [first, last, u(tokens)] as const)

function codePointCost(cp: number): number {
  if (cp < 0x10000) return BMP_COST[cp >> 4]!
  for (const [first, last, cost] of ASTRAL) if (cp >= first && cp <= last) return cost
  return ASTRAL_DEFAULT
}

// A run at the start of the text may follow anything, so it costs at least what any context
// could make of it: that is what keeps a split from ever costing less than the whole.
const MAX_PAIR = Math.max(PAIR_COMMON, PAIR_RARE, UPPER_PAIR_COMMON, UPPER_PAIR_RARE)
const START_SCALE = Math.max(...LETTER_SCALE)
const START_FIRST = Math.max(UNIT, ...LETTER_FIRST.map((first, ctx) => first - LETTER_CREDIT[ctx]!), Math.ceil(START_SCALE * MAX_PAIR) + 2)
const START_PUNCT_FIRST = Math.max(UNIT, PUNCT_PAIR_COMMON, PUNCT_PAIR_RARE)
/** A text starting with a space or punctuation may follow a word whose ending costs more. */
const START_AFTER_WORD = Math.max(FOREIGN_VOWEL_END, FOREIGN_EN_END)

// ---- Run costs ----

function letterCost(ctx: number, pairs: number): number {
  if (ctx === AT_START) return Math.max(UNIT, START_FIRST + Math.floor(START_SCALE * pairs))
  return Math.max(UNIT, LETTER_FIRST[ctx]! + Math.floor(LETTER_SCALE[ctx]! * pairs)) - LETTER_CREDIT[ctx]!
}

/** Cost units of a run of `length` units of one class (letters, punctuation and OTHER add `sum`). */
function runCost(cls: number, ctx: number, length: number, sum: number): number {
  switch (cls) {
    case LOWER:
    case UPPER:
      return letterCost(ctx, sum)
    case DIGIT:
      return Math.ceil(length / 3) * UNIT + (ctx === AFTER_LETTER || ctx === AT_START ? DIGITS_AFTER_LETTER : 0)
    case SPACE:
      return UNIT + Math.ceil((length - 1) / SPACES_PER_TOKEN) * UNIT
    case TAB:
      return UNIT + Math.ceil((length - 1) / TABS_PER_TOKEN) * UNIT
    case NEWLINE:
      return Math.max(0, Math.ceil(length / NEWLINES_PER_TOKEN) * UNIT - (ctx === AT_START ? 0 : NEWLINE_CREDIT[ctx]!))
    case PUNCT:
      return ctx === AT_START ? Math.max(UNIT, START_PUNCT_FIRST + sum) : Math.max(UNIT, UNIT + sum) - (ctx === AFTER_SPACE ? PUNCT_CREDIT_AFTER_SPACE : 0)
    case CONTROL:
      return length * UNIT
    default:
      return sum // OTHER: the start cost is in the sum, see firstOtherCost
  }
}

function firstOtherCost(ctx: number, cp: number): number {
  return Math.max(0, codePointCost(cp) + OTHER_START - (ctx === AFTER_SPACE ? OTHER_CREDIT_AFTER_SPACE : 0))
}

/** Characters that end a word: a space, a line end, or punctuation that closes a word or clause. */
const WORD_END = (() => {
  const table = new Uint8Array(128)
  for (const ch of " \t\n\r.,;:!?)'\"") table[ch.charCodeAt(0)] = 1
  return table
})()
const endsWord = (code: number) => code < 128 && WORD_END[code] === 1

/**
 * What a letter run ending with `last` (and `beforeLast`, 0 if none) costs once the unit after
 * it, `next` (-1 at the end of the text), shows that the word ended there. A run at the start of
 * the text may be the tail of a longer word, so its length does not excuse it.
 */
function wordEndCost(ctx: number, uppers: number, length: number, beforeLast: number, last: number, next: number): number {
  if (!endsWord(next) || uppers > 1) return 0
  const start = ctx === AT_START
  if (!start && ctx !== AFTER_SPACE && ctx !== AFTER_BREAK) return 0
  if (last === 97 || last === 111 || last === 105 || last === 117) return start || length >= 4 ? FOREIGN_VOWEL_END : 0
  if (last === 110 && (start ? length === 1 || beforeLast === 101 : length >= 5 && beforeLast === 101)) return FOREIGN_EN_END
  return 0
}

// ---- Scans ----

/**
 * Forward scan. With limit = -1, the text's cost in units. Otherwise, as -1 - i, the end of the
 * longest prefix costing at most `limit` units (limit a multiple of UNIT).
 */
function scan(text: string, limit: number): number {
  const n = text.length
  const bounded = limit >= 0
  let total = 0 // closed runs
  let cls = -1 // class of the open run; -1 before the first character
  let ctx = AT_START
  let length = 0
  let sum = 0
  let uppers = 0
  let last = 0
  let beforeLast = 0
  let prevClass = -1
  for (let i = 0; i < n; i++) {
    const start = i
    let code = text.charCodeAt(i)
    const c = code < 128 ? ASCII_CLASS[code]! : OTHER
    if (c === OTHER && code >= 0xd800 && code <= 0xdbff && i + 1 < n) {
      const low = text.charCodeAt(i + 1)
      if (low >= 0xdc00 && low <= 0xdfff) {
        code = ((code - 0xd800) << 10) + (low - 0xdc00) + 0x10000
        i++
      }
    }
    const letter = c === LOWER || c === UPPER
    const continues = letter ? (cls === UPPER || (cls === LOWER && c === LOWER)) : c === cls
    if (!continues) {
      if (cls === -1) {
        if (endsWord(code)) total += START_AFTER_WORD
      } else {
        total += runCost(cls, ctx, length, sum)
        if (cls === LOWER || cls === UPPER) total += wordEndCost(ctx, uppers, length, beforeLast, last, code)
      }
      ctx = prevClass === -1 ? AT_START : CONTEXT_OF_CLASS[prevClass]!
      cls = c
      length = 0
      sum = 0
      uppers = 0
      last = 0
    } else if (c === LOWER) cls = LOWER
    if (letter || c === PUNCT) {
      if (length > 0) sum += PAIR_COST[last * 128 + code]!
      if (c === UPPER) uppers++
      beforeLast = last
      last = code
    } else if (c === OTHER) {
      sum += length === 0 ? firstOtherCost(ctx, code) : codePointCost(code)
    }
    length++
    prevClass = c
    if (bounded && total + runCost(cls, ctx, length, sum) > limit) return -1 - start
  }
  if (bounded) return -1 - n
  return cls === -1 ? 0 : total + runCost(cls, ctx, length, sum)
}

/**
 * Backward scan for tailWithin: the cost of every suffix, from the shortest, each in O(1), and
 * the start of the longest one within `limit` units. A suffix may cost a little more than a
 * longer one (its first run is priced for any context), so the scan goes on past the first
 * suffix over the limit, until the part it has passed costs more than the limit by itself.
 */
function scanBack(text: string, limit: number): number {
  const n = text.length
  let best = n
  let rest = 0 // units of text[end..] as the whole text has it: runs after `end` keep their context
  let end = n
  while (end > 0 && rest <= limit) {
    // The run that ends at `end`: back to where its class changes (every non-ASCII unit is OTHER,
    // so a surrogate pair never straddles a run's edge).
    const runClass = classBefore(text, end)
    const letters = runClass === LOWER || runClass === UPPER
    let runStart = end - 1
    while (runStart > 0) {
      const before = classBefore(text, runStart)
      const joins = letters ? before === UPPER || (before === LOWER && ASCII_CLASS[text.charCodeAt(runStart)] === LOWER) : before === runClass
      if (!joins) break
      runStart--
    }
    const next = end < n ? text.charCodeAt(end) : -1
    const wordEnds = letters && endsWord(next)
    const last = text.charCodeAt(end - 1)
    const beforeLast = end - 2 >= runStart ? text.charCodeAt(end - 2) : 0
    // Every suffix starting inside the run: the part of the run it holds, priced at the start.
    let length = 0
    let sum = 0
    let uppers = 0
    let firstCost = 0 // OTHER: the cost of the code point the part starts with
    for (let i = end; i > runStart; ) {
      let at = i - 1
      let code = text.charCodeAt(at)
      if (code >= 0xdc00 && code <= 0xdfff && at > runStart) {
        const high = text.charCodeAt(at - 1)
        if (high >= 0xd800 && high <= 0xdbff) {
          at--
          code = ((high - 0xd800) << 10) + (code - 0xdc00) + 0x10000
        }
      }
      length += i - at
      let cost: number
      if (runClass === OTHER) {
        sum += firstCost // the code point that started the previous part is an inner one now
        firstCost = codePointCost(code)
        cost = sum + firstCost + OTHER_START
      } else {
        if (letters || runClass === PUNCT) {
          if (i < end) sum += PAIR_COST[code * 128 + text.charCodeAt(i)]!
          if (code <= 90) uppers++
        }
        cost = runCost(runClass, AT_START, length, sum)
        if (wordEnds) cost += wordEndCost(AT_START, uppers, length, beforeLast, last, next)
      }
      if (endsWord(code)) cost += START_AFTER_WORD
      if (cost + rest <= limit) best = at
      i = at
    }
    // The whole run, in the context the text gives it.
    const ctx = runStart === 0 ? AT_START : CONTEXT_OF_CLASS[classBefore(text, runStart)]!
    rest += fullRunCost(text, runStart, end, runClass, ctx)
    if (wordEnds) {
      let runUppers = 0
      for (let k = runStart; k < end && text.charCodeAt(k) <= 90; k++) runUppers++
      rest += wordEndCost(ctx, runUppers, end - runStart, beforeLast, last, next)
    }
    end = runStart
  }
  return best
}

function fullRunCost(text: string, start: number, end: number, cls: number, ctx: number): number {
  if (cls === OTHER) {
    let sum = 0
    for (let k = start; k < end; ) {
      const cp = text.codePointAt(k)!
      const size = cp > 0xffff && k + 1 < end ? 2 : 1
      sum += k === start ? firstOtherCost(ctx, cp) : codePointCost(size === 2 ? cp : text.charCodeAt(k))
      k += size
    }
    return sum
  }
  let sum = 0
  if (cls === LOWER || cls === UPPER || cls === PUNCT) for (let k = start + 1; k < end; k++) sum += PAIR_COST[text.charCodeAt(k - 1) * 128 + text.charCodeAt(k)]!
  return runCost(cls, ctx, end - start, sum)
}

/** Class of the UTF-16 unit before `i` (a low surrogate is OTHER, as its pair is). */
function classBefore(text: string, i: number): number {
  const code = text.charCodeAt(i - 1)
  return code < 128 ? ASCII_CLASS[code]! : OTHER
}
