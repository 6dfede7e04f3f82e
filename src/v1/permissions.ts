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
