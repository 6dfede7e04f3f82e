// Whether OpenCode offers the model a helper is asked to use. OpenCode answers a prompt for a model
// none of its providers has with a bare "UnknownError" (the real cause goes only to its own log),
// so the model is checked against the host's list first, and the failure names it with a guess.
import type { Host, ModelRef } from "../../host.js"
import { nearest } from "../../util/nearest.js"

/** Why the model cannot be used, or undefined when the host offers it or cannot say. Never throws. */
export async function unknownModel(host: Host, model: ModelRef | undefined, option: string, signal: AbortSignal): Promise<string | undefined> {
  if (!model || !host.modelIds) return undefined
  const offered = await host.modelIds(signal).catch(() => undefined)
  return offered ? unknownModelMessage(`${model.providerID}/${model.modelID}`, offered, option) : undefined
}

/** The sentence for a model `offered` lacks, or undefined when it has it. Pure. */
export function unknownModelMessage(id: string, offered: readonly string[], option: string): string | undefined {
  if (offered.length === 0 || offered.includes(id)) return undefined
  const guess = nearest(id, offered, Math.max(2, Math.floor(id.length / 4)))
  return `OpenCode's providers offer no model ${id}${guess ? `; did you mean ${guess}?` : ""} Set ${option} to one \`opencode models\` lists`
}
