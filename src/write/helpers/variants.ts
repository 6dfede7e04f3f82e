// Reasoning effort for the helper agents: Codex runs extraction at `low` and consolidation at
// `medium`. OpenCode models name their effort variants; when the preferred one is missing, the
// nearest listed effort is used (ties go to the higher one), and with none listed, no variant.

export const EFFORT_SCALE = ["none", "minimal", "low", "medium", "high", "xhigh", "max"] as const
export type Effort = (typeof EFFORT_SCALE)[number]

export function chooseVariant(listed: readonly string[], preferred: Effort): string | undefined {
  if (listed.includes(preferred)) return preferred
  const target = EFFORT_SCALE.indexOf(preferred)
  let best: { name: string; distance: number; rank: number } | undefined
  for (const name of listed) {
    const rank = EFFORT_SCALE.indexOf(name as Effort)
    if (rank < 0) continue
    const distance = Math.abs(rank - target)
    if (!best || distance < best.distance || (distance === best.distance && rank > best.rank)) best = { name, distance, rank }
  }
  return best?.name
}
