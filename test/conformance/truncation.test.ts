// Codex's middle-cut tests, with their inputs and expected outputs, run against ours.
//   codex-rs/utils/string/src/truncate/tests.rs, read at openai/codex b24d7f3c
//   codex-rs/utils/output-truncation/src/truncate_tests.rs, read at openai/codex 1c8ed6f1 (the
//     TruncationPolicy::Tokens cases: memories cut by tokens only)
//   codex-rs/memories/write/src/prompts_tests.rs, read at zijian2/codex ceee8037
// Codex's marker is `…N tokens truncated…` inline; ours is `[... N tokens truncated ...]` on a
// line of its own (see the note), so each case compares the kept head, the kept tail and N. What
// runs here is the port of Codex's byte rule (truncateMiddleCodex, codexTokens), kept for caps that
// are bytes in Codex; budgets sized for a model use the estimator (test/util/token-estimate.test.ts).
import { describe, expect, it } from "vitest"
import { fitBlocks } from "../../src/write/transcript/transcript-cut.js"
import { codexTokens as estimateTokens, truncateMiddleCodex as truncateMiddle } from "../../src/util/tokens.js"

const MARKER = /\n\[\.\.\. (\d+) tokens truncated \.\.\.\]\n/

/** Our cut of `text`, split back into what it kept and the count its marker gives. */
function cut(text: string, maxTokens: number): { head: string; tokens: number; tail: string } | string {
  const out = truncateMiddle(text, maxTokens)
  const match = MARKER.exec(out)
  if (!match) return out
  return { head: out.slice(0, match.index), tokens: Number(match[1]), tail: out.slice(match.index + match[0].length) }
}

/** split_string's budgets are bytes per side; the token cut splits 4 bytes a token in half. */
const bothSides = (bytesPerSide: number) => (2 * bytesPerSide) / 4

describe("truncate_middle_with_token_budget (utils/string)", () => {
  it("returns a text within its budget unchanged", () => {
    // truncate_with_token_budget_returns_original_when_under_limit
    expect(truncateMiddle("short output", 100)).toBe("short output")
    // split_string_handles_empty_string
    expect(truncateMiddle("", 1)).toBe("")
    // split_string_handles_overlapping_budgets_without_removal: 4 + 4 bytes hold all of "abcdef".
    expect(truncateMiddle("abcdef", bothSides(4))).toBe("abcdef")
  })

  it("gives only the marker at a zero budget, counting every byte", () => {
    // truncate_with_token_budget_reports_truncation_at_zero_limit: "…2 tokens truncated…"
    expect(cut("abcdef", 0)).toEqual({ head: "", tokens: 2, tail: "" })
    // split_string_works, second assertion: (3, "", "")
    expect(cut("abc", 0)).toEqual({ head: "", tokens: 1, tail: "" })
  })

  it("keeps half the budget from each end", () => {
    // split_string_works: ("hello", "world") with one character removed
    expect(cut("hello world", bothSides(5))).toEqual({ head: "hello", tokens: 1, tail: "world" })
  })

  it("cuts multi-byte text on character boundaries", () => {
    // truncate_middle_tokens_handles_utf8_content: "😀😀😀😀…8 tokens truncated… line with text\n"
    expect(cut("😀😀😀😀😀😀😀😀😀😀\nsecond line with text\n", 8)).toEqual({ head: "😀😀😀😀", tokens: 8, tail: " line with text\n" })
    // split_string_respects_utf8_boundaries
    expect(cut("😀abc😀", bothSides(5))).toEqual({ head: "😀a", tokens: 1, tail: "c😀" })
    expect(cut("😀😀😀😀😀", bothSides(1))).toEqual({ head: "", tokens: 5, tail: "" })
    expect(cut("😀😀😀😀😀", bothSides(8))).toEqual({ head: "😀😀", tokens: 1, tail: "😀😀" })
  })

  it("caps each side at half the budget, dropping what a character boundary leaves unused", () => {
    // split_string_respects_utf8_boundaries, "😀😀😀😀😀" at 7 + 7 bytes: ("😀", "😀"), and the
    // marker counts the 6 bytes over budget, 2 tokens.
    expect(cut("😀😀😀😀😀", bothSides(7))).toEqual({ head: "😀", tokens: 2, tail: "😀" })
    // truncate_middle_bytes_handles_utf8_content, Bytes(20): the tail keeps its 10 bytes
    // ("with text\n"), not the 12 the head's two emoji left over.
    expect(cut("😀😀😀😀😀😀😀😀😀😀\nsecond line with text\n", 5)).toEqual({ head: "😀😀", tokens: 11, tail: "with text\n" })
  })

  it("puts its marker on a line of its own", () => {
    expect(truncateMiddle("abcdef", 1)).toBe("ab\n[... 1 tokens truncated ...]\nef")
  })
})

describe("truncate_text with TruncationPolicy::Tokens (utils/output-truncation)", () => {
  const long = "this is an example of a long output that should be truncated"

  it("keeps a text within its budget", () => {
    // truncate_tokens_under_limit_returns_original
    expect(truncateMiddle("example output", 10)).toBe("example output")
  })

  it("keeps two bytes a side at one token", () => {
    // truncate_tokens_less_than_placeholder_returns_placeholder: "ex…3 tokens truncated…ut"
    expect(cut("example output", 1)).toEqual({ head: "ex", tokens: 3, tail: "ut" })
  })

  it("cuts a long line and a text of two lines", () => {
    // truncate_tokens_over_limit_returns_truncated: "this is an…10 tokens truncated… truncated"
    expect(cut(long, 5)).toEqual({ head: "this is an", tokens: 10, tail: " truncated" })
    // truncate_tokens_reports_original_line_count_when_truncated
    expect(cut(`${long}\nalso some other line`, 10)).toEqual({ head: "this is an example o", tokens: 11, tail: "also some other line" })
    // formatted_truncate_text_content_items_with_policy_merges_all_text_for_token_budget
    expect(cut("abcdefgh\nijklmnop", 2)).toEqual({ head: "abcd", tokens: 3, tail: "mnop" })
  })

  it("estimates tokens as UTF-8 bytes over four, rounded up", () => {
    // byte_count_conversion_clamps_non_positive_values: 0 -> 0, 5 -> 2
    expect(estimateTokens("")).toBe(0)
    expect(estimateTokens("abcde")).toBe(2)
    // formatted_truncate_text_content_items_with_policy_merges_all_text_for_token_budget: 17 bytes -> 5
    expect(estimateTokens("abcdefgh\nijklmnop")).toBe(5)
  })
})

describe("the stage-1 transcript cut (prompts_tests.rs)", () => {
  it("keeps the start and the end of a transcript over its budget and marks the cut", () => {
    // build_stage_one_input_message_uses_default_limit_when_model_context_window_missing, with
    // DEFAULT_ROLLOUT_TOKEN_LIMIT = 150,000: the rollout is one block here.
    const input = `${"a".repeat(700_000)}middle${"z".repeat(700_000)}`
    const fitted = fitBlocks([input], 150_000)
    expect(fitted.truncated).toBe(true)
    expect(fitted.text).toContain("tokens truncated")
    expect(fitted.text.startsWith("a")).toBe(true)
    expect(fitted.text.endsWith("z")).toBe(true)
    expect(fitted.text).not.toContain("middle")
    // Unlike Codex's cut, ours holds the marker inside the budget too.
    expect(Buffer.byteLength(fitted.text)).toBeLessThanOrEqual(150_000 * 4)
  })
})
