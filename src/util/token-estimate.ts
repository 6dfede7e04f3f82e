// How many tokens a model's tokenizer makes of a text, estimated without one (placeholder: the byte
// rule; the calibrated estimator replaces the body, the three functions and their contracts stay).

/** Tokens `text` is estimated to take. Never far below o200k_base's or cl100k_base's count. */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, "utf8") / 4)
}

/**
 * The largest index `i` at a code point boundary with estimateTokens(text.slice(0, i)) <= maxTokens.
 */
export function headWithin(text: string, maxTokens: number): number {
  let low = 0
  let high = text.length
  while (low < high) {
    const mid = Math.ceil((low + high) / 2)
    if (estimateTokens(text.slice(0, mid)) <= maxTokens) low = mid
    else high = mid - 1
  }
  if (low > 0 && low < text.length && isLow(text.charCodeAt(low))) low--
  return low
}

/**
 * The smallest index `i` at a code point boundary with estimateTokens(text.slice(i)) <= maxTokens.
 */
export function tailWithin(text: string, maxTokens: number): number {
  let low = 0
  let high = text.length
  while (low < high) {
    const mid = Math.floor((low + high) / 2)
    if (estimateTokens(text.slice(mid)) <= maxTokens) high = mid
    else low = mid + 1
  }
  if (low > 0 && low < text.length && isLow(text.charCodeAt(low))) low++
  return low
}

const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff
