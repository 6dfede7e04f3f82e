// Extraction where the host offers only a tool-less completion (OpenCode 2's generate.text): one
// prompt with no system role and no schema parameter. The version's instructions come first, then
// the session exactly as a helper session would receive it, then a reminder of the task and the
// schema the answer must match. The reply is text; the object in it is handed to the version's
// own answer checks, so both hosts' answers are validated by the same code. Pure, golden-tested.
import { renderTemplate, type Template } from "../../util/templates.js"

export interface SinglePromptParts {
  system: string
  text: string | readonly string[]
  schema: Record<string, unknown>
}

export function renderSinglePrompt(reminder: Template, parts: SinglePromptParts): string {
  const texts = typeof parts.text === "string" ? [parts.text] : [...parts.text]
  const tail = renderTemplate(reminder, { schema: JSON.stringify(parts.schema, null, 2) })
  return [parts.system.trimEnd(), ...texts.map((text) => text.trimEnd()), tail.trimEnd()].join("\n\n") + "\n"
}

/**
 * The JSON value a completion's text holds: the whole text, else the body of one fenced block,
 * else the span from the first `{` to the last `}`. Undefined when none of them parses, so the
 * answer checks report a reply that is not the record.
 */
export function jsonFromReply(text: string): unknown {
  const candidates = [text.trim()]
  const fenced = /```(?:json)?\s*\n([\s\S]*?)\n\s*```/.exec(text)
  if (fenced) candidates.push(fenced[1]!.trim())
  const start = text.indexOf("{")
  const end = text.lastIndexOf("}")
  if (start >= 0 && end > start) candidates.push(text.slice(start, end + 1))
  for (const candidate of candidates) {
    try {
      return JSON.parse(candidate)
    } catch {
      // try the next reading
    }
  }
  return undefined
}
