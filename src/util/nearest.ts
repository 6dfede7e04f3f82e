// "Did you mean": the candidate a mistyped name most likely meant. Pure.

/** A candidate the name is a prefix of (or that is a prefix of it), when only one is; else the nearest within `maxDistance` edits. */
export function nearest(name: string, names: readonly string[], maxDistance = 2): string | undefined {
  const prefixed = names.filter((candidate) => candidate.startsWith(name) || name.startsWith(candidate))
  if (prefixed.length === 1) return prefixed[0]
  let best: { name: string; distance: number } | undefined
  for (const candidate of names) {
    const distance = editDistance(name, candidate)
    if (distance <= maxDistance && (!best || distance < best.distance)) best = { name: candidate, distance }
  }
  return best?.name
}

/** Levenshtein distance, one row at a time. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    previous = current
  }
  return previous[b.length]!
}
