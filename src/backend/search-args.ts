// Checks of the numeric arguments the model passes to memory_read, memory_list and memory_search.
// A value above its maximum is lowered to it (asking for "everything" is reasonable); a value that
// is not a whole number, or is below the minimum, is an error that names the argument and range.
import { MemoryError } from "./errors.js"

/** `value` if it is a whole number in [min, max], `max` if above, `fallback` if absent. */
export function wholeNumber(value: unknown, name: string, range: { min: number; max: number; fallback: number }): number {
  if (value === undefined || value === null) return range.fallback
  if (typeof value !== "number" || !Number.isInteger(value) || value < range.min) {
    const bound = Number.isFinite(range.max) ? `from ${range.min} to ${range.max}` : `of at least ${range.min}`
    throw new MemoryError("invalid_argument", `${name} must be a whole number ${bound} (got ${JSON.stringify(value)}); omit it for the default.`)
  }
  return Math.min(value, range.max)
}
