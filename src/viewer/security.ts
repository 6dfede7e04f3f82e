// What keeps the viewer local and its actions deliberate. Each rule answers a hole that memory
// viewers have shipped with:
//   - it listens on 127.0.0.1 only, on a port the system picks (server.ts);
//   - every request carries the run's random token: in the URL the command printed, then in a
//     cookie that is HttpOnly and SameSite=Strict, so no other site's page can send it; its name
//     carries the port, since a browser keeps cookies per host, not per port: a second viewer (or
//     anything on another 127.0.0.1 port) neither overwrites it nor is handed it as its own;
//   - the hand-off's redirect is a path of this origin, however many slashes the request began with;
//   - the Host header must name the address it serves (a DNS-rebinding page's requests carry the
//     attacker's host name), and an Origin, when sent, must be that address too;
//   - a write (POST) must come from one of its own pages (Origin or Sec-Fetch-Site say so) and
//     carry a one-time token that was issued with the preview of exactly that change, for memory
//     as it was then: a stale preview is refused;
//   - every answer has a strict Content-Security-Policy (no script at all, nothing from elsewhere)
//     and is never cached.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"

/** The cookie's name for the viewer on `port`. */
export function cookieName(port: number | string): string {
  return `ocm_viewer_${port}`
}
/** How long a preview's action token stays usable. */
const ACTION_TTL_MS = 10 * 60_000
/** Tokens kept at once; older ones are dropped (their previews must be opened again). */
const MAX_ACTION_TOKENS = 256

export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "X-Content-Type-Options": "nosniff",
  // Not no-referrer: with it a browser sends `Origin: null` on a form post, and same-origin
  // posts could not be told from others. Other sites still get no referrer.
  "Referrer-Policy": "same-origin",
  "X-Frame-Options": "DENY",
  "Cache-Control": "no-store",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
})

export type Verdict = { ok: true; setCookie?: string; redirect?: string } | { ok: false; status: 400 | 401 | 403 | 421; reason: string }

export interface RequestFacts {
  method: string
  /** Path and query as requested. */
  url: URL
  host: string | undefined
  origin: string | undefined
  secFetchSite: string | undefined
  cookie: string | undefined
}

export class ViewerSecurity {
  /** The run's secret: in the printed URL, then in the cookie. */
  readonly token = randomBytes(32).toString("base64url")
  private readonly actionKey = randomBytes(32)
  private readonly issued = new Map<string, { binding: string; expires: number }>()

  /** This run's cookie: one per port. */
  readonly cookie: string

  constructor(
    /** The address served, `127.0.0.1:<port>`. */
    private readonly authority: string,
    private readonly now: () => number = Date.now,
  ) {
    this.cookie = cookieName(authority.slice(authority.lastIndexOf(":") + 1))
  }

  get origin(): string {
    return `http://${this.authority}`
  }

  /** The URL to print: the only way in. */
  entryUrl(): string {
    return `${this.origin}/?token=${this.token}`
  }

  check(request: RequestFacts): Verdict {
    if (request.host !== this.authority) return { ok: false, status: 421, reason: `this viewer answers only for ${this.authority}` }
    if (request.origin !== undefined && request.origin !== this.origin) return { ok: false, status: 403, reason: "requests from other origins are refused" }
    const write = request.method !== "GET" && request.method !== "HEAD"
    if (write) {
      // A form post of its own pages carries its Origin; fetch metadata, when sent, must say so too.
      if (request.origin === undefined) return { ok: false, status: 403, reason: "a change must come from one of the viewer's own pages" }
      if (request.secFetchSite !== undefined && request.secFetchSite !== "same-origin") return { ok: false, status: 403, reason: "cross-site changes are refused" }
    }
    // The printed address is handed off even when the cookie is already there (a second tab of
    // the same address): the token leaves the address bar either way.
    const offered = request.url.searchParams.get("token")
    if (!write && this.matches(offered ?? undefined)) {
      // Into a cookie, and out of the address bar (and of any history or screenshot of it).
      const clean = new URL(request.url.href)
      clean.searchParams.delete("token")
      return { ok: true, setCookie: `${this.cookie}=${this.token}; HttpOnly; SameSite=Strict; Path=/`, redirect: this.samePath(clean) }
    }
    if (this.matches(cookieValue(request.cookie, this.cookie))) return { ok: true }
    return { ok: false, status: 401, reason: "open the address the `ui` command printed (it carries this run's token)" }
  }

  /**
   * Where the hand-off sends the browser: always a path of this origin. `//host/x` (and `///`,
   * `/.//`, `/\`) would be read by the browser as another host, cookie set and all.
   */
  private samePath(url: URL): string {
    const location = `${url.pathname.replace(/^[/\\]+/, "/")}${url.search}`
    return new URL(location, this.origin).origin === this.origin ? location : "/"
  }

  /** A one-time token for one change, bound to what its preview showed (`state`). */
  issueAction(action: string, state: string): string {
    this.prune()
    const nonce = randomBytes(18).toString("base64url")
    const binding = this.bind(action, state)
    this.issued.set(nonce, { binding, expires: this.now() + ACTION_TTL_MS })
    return nonce
  }

  /**
   * Consumes a token: whether it was issued for this change with memory in `state` (now). A
   * token is good once; a preview of memory that changed since is refused.
   */
  redeemAction(nonce: string | undefined, action: string, state: string): "ok" | "unknown" | "stale" {
    const entry = nonce === undefined ? undefined : this.issued.get(nonce)
    if (!entry || entry.expires < this.now()) return "unknown"
    this.issued.delete(nonce!)
    return equal(entry.binding, this.bind(action, state)) ? "ok" : "stale"
  }

  private bind(action: string, state: string): string {
    return createHmac("sha256", this.actionKey).update(action).update("\u0000").update(state).digest("base64url")
  }

  private prune(): void {
    const now = this.now()
    for (const [nonce, entry] of this.issued) if (entry.expires < now) this.issued.delete(nonce)
    while (this.issued.size >= MAX_ACTION_TOKENS) this.issued.delete(this.issued.keys().next().value!)
  }

  private matches(candidate: string | undefined): boolean {
    return candidate !== undefined && equal(candidate, this.token)
  }
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=")
    if (key === name) return rest.join("=")
  }
  return undefined
}
