// How much text the helper agents' requests carry, on the real OpenCode (1.18.33, and 2.1.2 run as
// its shared service) with the scripted model:
// the extraction request for a session of about 600 characters, and the first request of the
// first consolidation. Measured twice in one run: with the helpers' own prompts, and with
// OpenCode's default coding-agent prompt (the state before the helpers had prompts of their own,
// brought back by a test switch).
import { FACT, runClosedLoop } from "../../test/e2e/support/closed-loop.js"
import { contentText, type ChatRequest } from "../../test/e2e/support/fake-llm.js"
import type { BenchResult } from "./measure.js"

const EXTRACTION_MAX = 5_500
const CONSOLIDATION_MAX = 8_000

/** About 600 characters of session: a user message carrying the fact, and the scripted reply. */
const STATEMENT = [
  `Please remember for later: ${FACT}`,
  "Some background, so you know why: the deploy script builds the container, runs the database",
  "migrations and then swaps the load balancer over to the new version. On Fridays nobody is on",
  "call in the evening, which is why we stopped deploying then after a bad weekend last spring.",
  "The staging environment is deployed the same way, with `make ship ENV=staging`.",
  "If a deploy fails halfway, run `make rollback` first, then tell the on-call channel before you retry.",
].join("\n")

interface Sizes {
  extraction: number
  consolidation: number
  sessionChars: number
}

export async function benchHelperRequests(): Promise<BenchResult> {
  const own = await measure({})
  const opencode = await measure({ OPENCODE_CODEX_MEMORY_TEST_DEFAULT_HELPER_PROMPT: "1" })
  // OpenCode 2.1.2: extraction is one generate.text prompt (instructions, transcript, reminder and
  // schema in one user message); consolidation a helper session given its instructions by the
  // context hook beside OpenCode 2's own system prompt.
  const v2 = await measure({}, "opencode2")
  const rows = (what: string, mine: number, before: number) => [
    `${what}: with the helpers' own prompts ${chars(mine)}; with OpenCode's default prompt ${chars(before)} (the state before, same run); own / default ${(mine / before).toFixed(2)}x`,
  ]
  return {
    name: `helper requests: message characters (real OpenCode, scripted model, session of ${own.sessionChars} chars)`,
    details: [
      "OpenCode 1.18.33:",
      ...rows("  extraction request", own.extraction, opencode.extraction),
      ...rows("  first consolidation request", own.consolidation, opencode.consolidation),
      "OpenCode 2.1.2 (its shared service):",
      `  extraction request (one generate.text prompt): ${chars(v2.extraction)}; 2.1.2 / 1.18.33 ${(v2.extraction / own.extraction).toFixed(2)}x`,
      `  first consolidation request: ${chars(v2.consolidation)}; 2.1.2 / 1.18.33 ${(v2.consolidation / own.consolidation).toFixed(2)}x`,
    ],
    checks: [
      { kind: "absolute", what: "OpenCode 1.18.33: extraction request, own prompts", value: own.extraction, unit: "chars", digits: 0, max: EXTRACTION_MAX },
      { kind: "absolute", what: "OpenCode 1.18.33: first consolidation request, own prompts", value: own.consolidation, unit: "chars", digits: 0, max: CONSOLIDATION_MAX },
      { kind: "absolute", what: "OpenCode 2.1.2: extraction request", value: v2.extraction, unit: "chars", digits: 0, max: EXTRACTION_MAX },
      { kind: "absolute", what: "OpenCode 2.1.2: first consolidation request", value: v2.consolidation, unit: "chars", digits: 0, max: CONSOLIDATION_MAX },
    ],
  }
}

async function measure(env: Record<string, string>, host: "opencode1" | "opencode2" = "opencode1"): Promise<Sizes> {
  const result = await runClosedLoop({ statement: STATEMENT, env, host })
  if (result.factAfterForgetting || !result.injectedBlock.includes("make ship")) throw new Error("benchmark setup: the closed loop did not behave")
  return {
    extraction: messageChars(result.helperRequests.extraction),
    consolidation: messageChars(result.helperRequests.consolidation),
    // The scripted model's first default reply is session A's only assistant text.
    sessionChars: STATEMENT.length + "FAKE-REPLY #1".length,
  }
}

/** Every message's text (system, user, assistant, tool), as the model receives it. */
export function messageChars(request: ChatRequest): number {
  return (request.messages ?? []).reduce((sum, message) => sum + contentText(message.content).length, 0)
}

function chars(n: number): string {
  return `${n.toLocaleString("en-US")} chars`
}
