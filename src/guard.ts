// Fail open, once, at the host boundary: every hook runs inside `guard`, which bounds its time,
// catches what it throws, and records a diagnostic. The user's turn always goes on.
import { GUARD } from "./constants.js"
import type { Diagnostics } from "./diagnostics.js"

export interface GuardOptions {
  diagnostics: Diagnostics
  /** Hook names that throw on purpose (fault injection for tests). */
  faults?: ReadonlySet<string>
  timeoutMs?: number
}

export type Guard = <A extends unknown[]>(name: string, fn: (...args: A) => unknown) => (...args: A) => Promise<void>

export function createGuard(options: GuardOptions): Guard {
  const timeoutMs = options.timeoutMs ?? GUARD.HOOK_TIMEOUT_MS
  return (name, fn) =>
    async (...args) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      try {
        if (options.faults?.has(name)) throw new Error(`injected fault in ${name}`)
        const result = fn(...args)
        if (!(result instanceof Promise)) return
        const late = new Promise<"late">((resolve) => {
          timer = setTimeout(() => resolve("late"), timeoutMs)
          timer.unref?.()
        })
        if ((await Promise.race([result, late])) === "late") {
          options.diagnostics.report("warn", name, `took longer than ${timeoutMs} ms; the turn went on without it`)
          result.catch((error: unknown) => options.diagnostics.error(name, error))
        }
      } catch (error) {
        options.diagnostics.error(name, error)
      } finally {
        if (timer) clearTimeout(timer)
      }
    }
}
