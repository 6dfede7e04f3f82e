// Model-facing text lives in `templates/*.md` with `{{ name }}` placeholders. A template is read
// and checked once; rendering is a pure function that fails on a missing or unexpected value, so a
// broken template fails the first test that renders it, never a user's turn in silence.
import fs from "node:fs"
import path from "node:path"

const PLACEHOLDER = /\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}/g

export interface Template {
  readonly name: string
  readonly text: string
  readonly placeholders: ReadonlySet<string>
}

export function parseTemplate(name: string, text: string): Template {
  const placeholders = new Set<string>()
  for (const match of text.matchAll(PLACEHOLDER)) placeholders.add(match[1]!)
  if (/\{\{|\}\}/.test(text.replace(PLACEHOLDER, ""))) throw new Error(`template ${name}: malformed placeholder`)
  return { name, text, placeholders }
}

export function loadTemplate(templatesDir: string, name: string): Template {
  return parseTemplate(name, fs.readFileSync(path.join(templatesDir, name), "utf8"))
}

export function renderTemplate(template: Template, values: Readonly<Record<string, string>>): string {
  for (const key of template.placeholders) {
    if (!(key in values)) throw new Error(`template ${template.name}: no value for {{ ${key} }}`)
  }
  for (const key of Object.keys(values)) {
    if (!template.placeholders.has(key)) throw new Error(`template ${template.name}: unexpected value "${key}"`)
  }
  // A function replacement, so `$&` and friends inside values are inserted literally.
  return template.text.replace(PLACEHOLDER, (_, key: string) => values[key]!)
}
