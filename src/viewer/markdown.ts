// Memory content is written by a model from what sessions said: untrusted. Three walls:
//   1. markdown-it is set so nothing in the text becomes markup of its own: raw HTML is escaped
//      (`html: false`), attribute values are escaped, a link whose URL is not http, https or
//      mailto (javascript:, data:, file:, vbscript:, a relative path) keeps its text and loses its
//      target, and an image is shown as its text (it would be a request to anywhere);
//   2. what it renders is then filtered by js-xss against an allowlist of the tags and attributes
//      Markdown produces, so a renderer bug or option change cannot let a tag or handler through;
//   3. the page's Content-Security-Policy (security.ts) runs no script and loads nothing else.
import MarkdownIt from "markdown-it"
import { FilterXSS } from "xss"

const SAFE_URL = /^(https?:|mailto:)/i

/** The renderer: one per viewer, pure after construction. */
export function markdownRenderer(): (text: string) => string {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false })
  // markdown-it already refuses javascript:, vbscript:, file: and most data: URLs; this narrows
  // links to the schemes a memory note has any business pointing at.
  md.validateLink = (url: string) => SAFE_URL.test(url.trim())
  const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options))
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    // Links leave the viewer without telling the other site where they came from.
    tokens[idx]!.attrSet("rel", "noopener noreferrer nofollow")
    return defaultLinkOpen(tokens, idx, options, env, self)
  }
  // An image would be a request to anywhere; show its text instead.
  md.renderer.rules.image = (tokens, idx) => md.utils.escapeHtml(tokens[idx]!.content || "[image]")
  const filter = new FilterXSS({
    whiteList: ALLOWED,
    stripIgnoreTag: true,
    stripIgnoreTagBody: ["script", "style", "iframe", "object"],
    safeAttrValue: (tag, name, value) => (name === "href" ? (SAFE_URL.test(value.trim()) ? value : "") : value),
  })
  return (text) => filter.process(md.render(text))
}

/** What Markdown renders, and nothing else: no style, no event handler, no src anywhere. */
const ALLOWED: Record<string, string[]> = Object.fromEntries([
  ...["p", "br", "hr", "em", "strong", "s", "del", "code", "pre", "blockquote", "ul", "li", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr"].map((tag) => [tag, []]),
  ["ol", ["start"]],
  ["th", []],
  ["td", []],
  ["a", ["href", "rel"]],
])
