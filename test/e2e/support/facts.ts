// A scripted extractor for end-to-end tests that follow facts through memory: every `FACT-NAME: ...`
// line the extraction transcript shows is copied into the record, so whatever text reached the
// extractor (the user's words, or memory quoted back) would be stored again and can be looked for.
import { userText, type ChatRequest } from "./fake-llm.js"

export const FACT_LINE = /FACT-[A-Z]+: [a-zA-Z ]+/g

/** The extraction answer holding every fact line of the request, or an empty one when it shows none. */
export function copyingExtractor(request: ChatRequest): Record<string, unknown> {
  const facts = [...new Set(userText(request).match(FACT_LINE) ?? [])]
  if (!facts.length) return { rollout_summary: "", raw_memory: "", rollout_slug: "" }
  return {
    rollout_summary: `The user shared project facts.\n${facts.join("\n")}`,
    raw_memory: `---\ndescription: project facts\ntask_outcome: success\n---\n${facts.map((fact) => `- ${fact}`).join("\n")}`,
    rollout_slug: "project-facts",
  }
}
