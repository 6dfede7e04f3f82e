// OpenCode's default agents allow every permission not named otherwise, which would let
// `memory_reset`'s approval request pass silently. The config hook makes that one permission
// "ask" unless the user configured it; a user's own rule for it always wins.

type Action = "ask" | "allow" | "deny"
type PermissionConfig = Action | Record<string, unknown>

export function requireApprovalFor(config: { permission?: PermissionConfig }, permission: string): void {
  const current = config.permission
  if (current === undefined) {
    config.permission = { [permission]: "ask" }
    return
  }
  if (typeof current === "string") {
    // A blanket action keeps applying to everything else; rules later in the object win.
    config.permission = { "*": current, [permission]: "ask" }
    return
  }
  if (!(permission in current)) current[permission] = "ask"
}

/**
 * Keeps `agents` out of the `task` tool of every agent: OpenCode 1.x lists each subagent the
 * caller is not denied in that tool's description (about 260 characters on every request for the
 * two helpers), and the helpers are started by the plugin itself, never through `task`. A rule the
 * user wrote for one of them wins.
 */
export function hideFromTask(config: { permission?: PermissionConfig }, agents: readonly string[]): void {
  const permission = (config.permission = typeof config.permission === "object" && config.permission !== null ? config.permission : config.permission === undefined ? {} : { "*": config.permission })
  const current = permission.task
  const task: Record<string, unknown> = typeof current === "object" && current !== null ? (current as Record<string, unknown>) : current === undefined ? {} : { "*": current }
  for (const agent of agents) if (!(agent in task)) task[agent] = "deny"
  permission.task = task
}
