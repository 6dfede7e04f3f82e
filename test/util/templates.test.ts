import { describe, expect, it } from "vitest"
import { parseTemplate, renderTemplate } from "../../src/util/templates.js"

describe("templates", () => {
  it("fills every placeholder and inserts values literally", () => {
    const t = parseTemplate("t.md", "A {{ one }} B {{two}} C {{ one }}")
    expect([...t.placeholders]).toEqual(["one", "two"])
    expect(renderTemplate(t, { one: "$& {{ two }}", two: "2" })).toBe("A $& {{ two }} B 2 C $& {{ two }}")
  })

  it("fails on a missing or an unexpected value", () => {
    const t = parseTemplate("t.md", "{{ one }}")
    expect(() => renderTemplate(t, {})).toThrow(/no value for \{\{ one \}\}/)
    expect(() => renderTemplate(t, { one: "1", extra: "x" })).toThrow(/unexpected value "extra"/)
  })

  it("fails on a malformed placeholder when parsed", () => {
    expect(() => parseTemplate("t.md", "{{ Bad-Name }}")).toThrow(/malformed placeholder/)
    expect(() => parseTemplate("t.md", "{{ open")).toThrow(/malformed placeholder/)
  })
})
