// The viewer's Markdown renderer on hostile memory text: no tag, handler or dangerous URL of the
// text survives, whatever way it is written; ordinary Markdown renders as Markdown.
import { describe, expect, it } from "vitest"
import { markdownRenderer } from "../../src/viewer/markdown.js"

const render = markdownRenderer()

describe("markdownRenderer", () => {
  it("renders ordinary Markdown: headings, lists, code, tables, safe links", () => {
    const out = render("# Title\n\n- one\n- `two`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[docs](https://example.com/x?a=1&b=2)")
    expect(out).toContain("<h1>Title</h1>")
    expect(out).toContain("<li><code>two</code></li>")
    expect(out).toContain("<td>1</td>")
    expect(out).toContain('<a href="https://example.com/x?a=1&amp;b=2" rel="noopener noreferrer nofollow">docs</a>')
  })

  it("leaves no tag, handler or script URL of the text", () => {
    const attacks = [
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      '<a href="javascript:alert(1)">x</a>',
      "[x](javascript:alert(1))",
      "[x](JaVaScRiPt:alert(1))",
      "[x](  javascript:alert(1))",
      "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
      "[x](vbscript:msgbox(1))",
      "[x](file:///etc/passwd)",
      "![x](https://tracker.example/p.png)",
      '<svg onload=alert(1)>',
      '<iframe src="https://evil.example"></iframe>',
      "[x](https://ok.example \"title\\\" onmouseover=\\\"alert(1)\")",
      "<style>body{display:none}</style>",
    ]
    for (const attack of attacks) {
      const out = render(attack)
      expect(out, attack).not.toMatch(/<(script|img|svg|iframe|style|object)/i)
      expect(out, attack).not.toMatch(/<[^>]*\son\w+=/i)
      expect(out, attack).not.toMatch(/href="\s*(javascript|data|vbscript|file):/i)
    }
    expect(render("<script>alert(1)</script>")).toContain("&lt;script&gt;")
  })
})
