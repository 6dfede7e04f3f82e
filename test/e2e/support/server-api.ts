// A few calls to a running `opencode serve`, over plain HTTP, scoped to one project directory.

export class ServerApi {
  constructor(
    readonly url: string,
    readonly directory: string,
  ) {}

  async request<T>(method: string, route: string, body?: unknown): Promise<T> {
    const separator = route.includes("?") ? "&" : "?"
    const response = await fetch(`${this.url}${route}${separator}directory=${encodeURIComponent(this.directory)}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await response.text()
    if (!response.ok) throw new Error(`${method} ${route} -> ${response.status}: ${text.slice(0, 500)}`)
    return (text ? JSON.parse(text) : undefined) as T
  }

  createSession(title: string): Promise<{ id: string }> {
    return this.request("POST", "/session", { title })
  }

  /** Sends a user message and waits for the assistant's reply to finish. */
  prompt(sessionId: string, text: string): Promise<{ info: Record<string, unknown>; parts: Array<Record<string, unknown>> }> {
    return this.request("POST", `/session/${sessionId}/message`, { parts: [{ type: "text", text }] })
  }

  /** Sends a user message without waiting for the reply. */
  promptAsync(sessionId: string, text: string): Promise<void> {
    return this.request("POST", `/session/${sessionId}/prompt_async`, { parts: [{ type: "text", text }] })
  }

  messages(sessionId: string): Promise<Array<{ info: Record<string, unknown>; parts: Array<Record<string, unknown>> }>> {
    return this.request("GET", `/session/${sessionId}/message`)
  }

  pendingPermissions(): Promise<Array<{ id: string; sessionID: string; permission: string; patterns: string[] }>> {
    return this.request("GET", "/permission")
  }

  replyPermission(requestId: string, reply: "once" | "always" | "reject"): Promise<unknown> {
    return this.request("POST", `/permission/${requestId}/reply`, { reply })
  }

  /** Busy sessions; an idle session is absent. */
  status(): Promise<Record<string, { type: string }>> {
    return this.request("GET", "/session/status")
  }
}
