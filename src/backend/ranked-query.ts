// A ranked search's words as an FTS5 query. The words of every query string are taken as they
// come (letters and digits; everything else separates them, as the index's tokenizer does), small
// function words are dropped, and each remaining word is one OR'ed term, so BM25 scores a document
// by the rare words it holds more than the common ones. Each pair of neighbouring words is also a
// phrase term: a document holding them side by side earns more than one where they are scattered.
// Every term is quoted, so no word can be read as FTS5 syntax. Pure.

export interface RankedPlan {
  /** The words searched for, lowercased, in the order given, each once. */
  terms: string[]
  /** The FTS5 MATCH expression; undefined when the queries hold no word at all. */
  match: string | undefined
}

/** More words than this add nothing a model's search needs, and cost time. */
const MAX_TERMS = 24

// Words that carry no topic: a question's scaffolding ("how do we ...") and English glue. Short on
// purpose: "test", "build" or "run" are topics in this memory.
const STOPWORDS = new Set(
  "a an and are as at be by can could did do does for from had has have how i if in into is it its me my of on or our should so that the their them then there these this those to us was we were what when where which who why will with would you your".split(" "),
)

export function planRanked(queries: readonly string[]): RankedPlan {
  const sequences = queries.map((query) => words(query))
  const all = sequences.flat()
  // A query made only of glue words still searches for them, rather than for nothing.
  const keep = all.some((word) => !STOPWORDS.has(word)) ? (word: string) => !STOPWORDS.has(word) : () => true
  const terms = [...new Set(all.filter(keep))].slice(0, MAX_TERMS)
  if (terms.length === 0) return { terms, match: undefined }
  const pairs = new Set<string>()
  for (const sequence of sequences) {
    const kept = sequence.filter(keep)
    for (let i = 1; i < kept.length; i++) if (kept[i - 1] !== kept[i]) pairs.add(`${kept[i - 1]} ${kept[i]}`)
  }
  const phrases = [...pairs].filter((pair) => pair.split(" ").every((word) => terms.includes(word))).slice(0, MAX_TERMS)
  return { terms, match: [...terms, ...phrases].map((term) => `"${term}"`).join(" OR ") }
}

function words(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => word.length <= 64)
}
