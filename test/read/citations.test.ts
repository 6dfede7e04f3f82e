import { describe, expect, it } from "vitest"
import { extractCitations, hasCitation, parseEntry } from "../../src/read/citations.js"

const BLOCK = [
  "<memory-citation>",
  "<citation_entries>",
  "MEMORY.md:12-19|note=[how releases are cut]",
  "rollout_summaries/2026-03-02T10-11-12-aB3x-ci.md:5-9|note=[the flaky test fix]",
  "</citation_entries>",
  "<session_ids>",
  "ses_abc123",
  "ses_abc123",
  "ses_def456",
  "</session_ids>",
  "</memory-citation>",
].join("\n")

describe("extractCitations", () => {
  it("strips a trailing block and parses its entries and unique session ids", () => {
    const { text, citation } = extractCitations(`Use \`make release\`.\n\n${BLOCK}\n`)
    expect(text).toBe("Use `make release`.")
    expect(citation?.sessionIds).toEqual(["ses_abc123", "ses_def456"])
    expect(citation?.entries).toEqual([
      { path: "MEMORY.md", start: 12, end: 19, note: "how releases are cut" },
      { path: "rollout_summaries/2026-03-02T10-11-12-aB3x-ci.md", start: 5, end: 9, note: "the flaky test fix" },
    ])
  })

  it("leaves text without a block byte for byte", () => {
    const text = "Line one\n\n\n\nline after three blank lines   \n"
    expect(extractCitations(text)).toEqual({ text, citation: undefined })
  })

  it("keeps the reply's own blank lines and code around a block in the middle", () => {
    const reply = "Intro\n\n```\na\n\n\nb\n```\n" + BLOCK + "\nTail"
    expect(extractCitations(reply).text).toBe("Intro\n\n```\na\n\n\nb\n```\n\nTail")
  })

  it("removes a block left open at the end of a cut-off reply", () => {
    const { text, citation } = extractCitations("Answer.\n<memory-citation>\n<citation_entries>\nMEMORY.md:3-4|note=[x]\n")
    expect(text).toBe("Answer.")
    expect(citation?.entries).toHaveLength(1)
  })

  it("merges several blocks and matches the tag in any case, keeping the text between them as it was", () => {
    const second = "<MEMORY-CITATION><session_ids>\nses_zzz999\n</session_ids></MEMORY-CITATION>"
    const { text, citation } = extractCitations(`A ${BLOCK} B ${second}`)
    expect(text).toBe("A  B")
    expect(citation?.sessionIds).toEqual(["ses_abc123", "ses_def456", "ses_zzz999"])
  })

  it("ignores malformed entries and ids without failing", () => {
    const block = "<memory-citation><citation_entries>\nno range here\nMEMORY.md:9-3|note=[backwards]\nMEMORY.md:7|note=[single line, no range]\nMEMORY.md:7-7|note=[one line]\n</citation_entries><session_ids>\nbad id with spaces\nses_ok1\n</session_ids></memory-citation>"
    const { citation } = extractCitations(block)
    expect(citation?.entries).toEqual([{ path: "MEMORY.md", start: 7, end: 7, note: "one line" }])
    expect(citation?.sessionIds).toEqual(["ses_ok1"])
  })

  it("detects a block cheaply", () => {
    expect(hasCitation("x <Memory-Citation>")).toBe(true)
    expect(hasCitation("memory citation")).toBe(false)
  })
})

describe("parseEntry", () => {
  it("splits at the last note marker and the last colon, so paths may hold colons", () => {
    expect(parseEntry("skills/a:b/SKILL.md:1-2|note=[see: here]")).toEqual({ path: "skills/a:b/SKILL.md", start: 1, end: 2, note: "see: here" })
  })
})
