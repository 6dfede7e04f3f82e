// Codex's own citation tests, with their inputs and expected outputs, run against our parser.
// Our tag is <memory-citation> where Codex's stream-parser tests use <citation>, and our id
// section is <session_ids>, so each input is the same text with our tag names.
//   codex-rs/utils/stream-parser/src/citation.rs (tests module), read at zijian2/codex ceee8037
//     and openai/codex 93e4b538 (the same seven tests)
//   codex-rs/memories/read/src/citations_tests.rs, read at zomem/codex fbc75cf4 (same in
//     zijian2/codex ceee8037 and DeadlyJoker/cuican-aide fab9312d)
import { describe, expect, it } from "vitest"
import { extractCitations, parseCitationBodies, parseEntry, stripCitationBlocks } from "../../src/read/citations.js"

/** Codex's stream tests feed chunks; our input is one finished text, so the chunks are joined. */
const joined = (chunks: string[]) => chunks.join("")

describe("stripping citation blocks (citation.rs)", () => {
  it("removes a block whose tags were split across chunks and keeps both spaces around it", () => {
    // citation_parser_streams_across_chunk_boundaries
    const out = stripCitationBlocks(joined(["Hello <memory-cita", "tion>source A</memory-cita", "tion> world"]))
    expect(out).toEqual({ text: "Hello  world", bodies: ["source A"] })
  })

  it("removes a block whose opening tag was split, keeping the text before and after it", () => {
    // citation_parser_buffers_partial_open_tag_prefix
    expect(stripCitationBlocks(joined(["abc <memory-cita", "tion>x</memory-citation>z"]))).toEqual({ text: "abc z", bodies: ["x"] })
  })

  it("closes a block left open at the end and keeps its content as the citation", () => {
    // citation_parser_auto_closes_unterminated_tag_on_finish
    expect(stripCitationBlocks("x<memory-citation>source")).toEqual({ text: "x", bodies: ["source"] })
    // strip_citations_auto_closes_unterminated_citation_at_eof
    expect(stripCitationBlocks("x<memory-citation>y")).toEqual({ text: "x", bodies: ["y"] })
  })

  it("keeps a partial opening tag at the end as text", () => {
    // citation_parser_preserves_partial_open_tag_at_eof_if_not_a_full_tag
    expect(stripCitationBlocks("hello <memory-cita")).toEqual({ text: "hello <memory-cita", bodies: [] })
    expect(extractCitations("hello <memory-cita")).toEqual({ text: "hello <memory-cita", citation: undefined })
  })

  it("collects every block and joins the text around them without adding anything", () => {
    // strip_citations_collects_all_citations
    const out = stripCitationBlocks("a<memory-citation>one</memory-citation>b<memory-citation>two</memory-citation>c")
    expect(out).toEqual({ text: "abc", bodies: ["one", "two"] })
  })

  it("does not nest blocks: the first closing tag ends the block", () => {
    // citation_parser_does_not_support_nested_tags
    const out = stripCitationBlocks("a<memory-citation>x<memory-citation>y</memory-citation>z</memory-citation>b")
    expect(out).toEqual({ text: "az</memory-citation>b", bodies: ["x<memory-citation>y"] })
  })

  it("drops the whitespace before a block that ends the reply, which Codex would keep", () => {
    // Not a Codex case: our one deliberate difference (the stripped text replaces the stored part).
    expect(stripCitationBlocks("Done.\n\n<memory-citation>x</memory-citation>\n")).toEqual({ text: "Done.", bodies: ["x"] })
    expect(stripCitationBlocks("Done. <memory-citation>x")).toEqual({ text: "Done.", bodies: ["x"] })
    // Text after the last block keeps its whitespace, as in Codex.
    expect(stripCitationBlocks("a <memory-citation>x</memory-citation> b ").text).toBe("a  b ")
  })
})

describe("parsing citation blocks (citations_tests.rs)", () => {
  // Codex's ids are fresh ThreadIds (UUIDs); ours are OpenCode session ids.
  const first = "ses_0a1b2c3d4e5f"
  const second = "ses_6a7b8c9d0e1f"

  it("reads the legacy thread_ids section", () => {
    // parse_memory_citation_supports_legacy_thread_ids: Codex keeps the ids that are ThreadIds;
    // ours keeps the ids shaped like a record key, so "not-a-uuid" passes here (see the note).
    const body = `\n<citation_entries>\nMEMORY.md:1-2|note=[x]\n</citation_entries>\n<thread_ids>\n${first}\nnot a session id\n${second}\n</thread_ids>\n`
    expect(parseCitationBodies([body])?.sessionIds).toEqual([first, second])
  })

  it("reads the rollout_ids section", () => {
    // parse_memory_citation_supports_rollout_ids
    expect(parseCitationBodies([`\n<rollout_ids>\n${first}\n</rollout_ids>\n`])).toEqual({ entries: [], sessionIds: [first] })
  })

  it("extracts entries in order and each cited id once", () => {
    // parse_memory_citation_extracts_entries_and_rollout_ids
    const body = `<citation_entries>\nMEMORY.md:1-2|note=[summary]\nrollout_summaries/foo.md:10-12|note=[details]\n</citation_entries>\n<session_ids>\n${first}\n${second}\n${first}\n</session_ids>`
    expect(parseCitationBodies([body])).toEqual({
      entries: [
        { path: "MEMORY.md", start: 1, end: 2, note: "summary" },
        { path: "rollout_summaries/foo.md", start: 10, end: 12, note: "details" },
      ],
      sessionIds: [first, second],
    })
  })

  it("prefers our session_ids section when a block also has Codex's", () => {
    const body = `<session_ids>\n${first}\n</session_ids><rollout_ids>\n${second}\n</rollout_ids>`
    expect(parseCitationBodies([body])?.sessionIds).toEqual([first])
  })

  it("gives no citation when no block names an entry or an id", () => {
    // parse_memory_citation returns None for entries and ids both empty.
    expect(parseCitationBodies(["<citation_entries>\nnot an entry\n</citation_entries>"])).toBeUndefined()
    expect(extractCitations("Answer.<memory-citation></memory-citation>")).toEqual({ text: "Answer.", citation: undefined })
  })
})

describe("the entry line, at its edges (parse_memory_citation_entry)", () => {
  // No Codex test covers these; the expected values follow the rule Codex's function states.
  it("trims the path, the numbers and the note", () => {
    expect(parseEntry("  MEMORY.md : 3 - 5 |note=[  why  ]  ")).toEqual({ path: "MEMORY.md", start: 3, end: 5, note: "why" })
  })

  it("refuses an entry without a note, or with text after the note's closing bracket", () => {
    expect(parseEntry("MEMORY.md:3-5")).toBeUndefined()
    expect(parseEntry("MEMORY.md:3-5|note=[why")).toBeUndefined()
    expect(parseEntry("MEMORY.md:3-5|note=[why] later")).toBeUndefined()
    expect(parseEntry("MEMORY.md:3-5|note=[]")).toEqual({ path: "MEMORY.md", start: 3, end: 5, note: "" })
  })

  it("refuses a single line number or a range with trailing text", () => {
    expect(parseEntry("MEMORY.md:7|note=[x]")).toBeUndefined()
    expect(parseEntry("MEMORY.md:1-2 lines|note=[x]")).toBeUndefined()
    expect(parseEntry("MEMORY.md:1-2-3|note=[x]")).toBeUndefined()
  })

  it("reads numbers as Rust reads a u32: an optional plus sign, nothing past 4294967295", () => {
    expect(parseEntry("MEMORY.md:+1-+2|note=[x]")).toMatchObject({ start: 1, end: 2 })
    expect(parseEntry("MEMORY.md:1-4294967295|note=[x]")).toMatchObject({ end: 4294967295 })
    expect(parseEntry("MEMORY.md:1-4294967296|note=[x]")).toBeUndefined()
  })

  it("splits at the last note marker and the last colon, so notes and paths may hold either", () => {
    expect(parseEntry("skills/a:b/SKILL.md:1-2|note=[a |note=[ inside]")).toBeUndefined()
    expect(parseEntry("skills/a:b/SKILL.md:1-2|note=[x]")).toEqual({ path: "skills/a:b/SKILL.md", start: 1, end: 2, note: "x" })
    expect(parseEntry("x.md:1-2|note=[see: a]b]")).toEqual({ path: "x.md", start: 1, end: 2, note: "see: a]b" })
  })

  it("refuses what Codex accepts but names no lines: an empty path, line 0, a backwards range", () => {
    expect(parseEntry(":1-2|note=[x]")).toBeUndefined()
    expect(parseEntry("MEMORY.md:0-0|note=[x]")).toBeUndefined()
    expect(parseEntry("MEMORY.md:9-3|note=[x]")).toBeUndefined()
  })
})
