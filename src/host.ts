// The contract between the memory core and an OpenCode host. Adapters (src/v1 for OpenCode 1.x,
// later src/v2) implement it; nothing in the core imports an adapter or an SDK.

export type LogLevel = "debug" | "info" | "warn" | "error"

export type HostKind = "opencode1" | "opencode2"

export interface Host {
  readonly kind: HostKind
  /** Writes to the host's log. Must not throw; callers never await it on a user's turn. */
  log(level: LogLevel, message: string, extra?: Record<string, unknown>): Promise<void>
}
