// HTML built from templates whose every interpolated value is escaped unless it is marked as
// markup already made (Raw): memory text, titles and ids are untrusted, and the easy way to put
// them in a page must be the safe one. Pure.

export class Raw {
  constructor(readonly html: string) {}
  toString(): string {
    return this.html
  }
}

export function raw(html: string): Raw {
  return new Raw(html)
}

export type Part = Raw | string | number | boolean | null | undefined | readonly Part[]

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`)
}

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return ""
  if (part instanceof Raw) return part.html
  if (Array.isArray(part)) return part.map(render).join("")
  return escapeHtml(String(part))
}

/** A template whose values are escaped: html`<p>${text}</p>`. */
export function html(strings: TemplateStringsArray, ...values: readonly Part[]): Raw {
  let out = strings[0]!
  values.forEach((value, i) => (out += render(value) + strings[i + 1]!))
  return new Raw(out)
}

/** A query string from parts, each escaped for a URL. */
export function query(parts: Readonly<Record<string, string | undefined>>): string {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(parts)) if (value !== undefined) search.set(key, value)
  const text = search.toString()
  return text ? `?${text}` : ""
}
