// The network a sandbox's OpenCode may not use: a proxy on 127.0.0.1 that refuses every request
// it is given and remembers where each one was going. A sandbox points HTTP(S)_PROXY at it (Bun's
// fetch follows them) with NO_PROXY for loopback, so the scripted model and OpenCode's own server
// are reached directly and anything else is refused here, never sent; a test asserts at the end
// that nothing was even tried.
import http from "node:http"
import type { AddressInfo } from "node:net"

export class NetworkGuard {
  private readonly tried: string[] = []

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<NetworkGuard> {
    const server = http.createServer()
    const guard = new NetworkGuard(server)
    server.on("request", (req, res) => {
      guard.tried.push(`${req.method} ${req.url ?? ""}`)
      res.writeHead(403, { "content-type": "text/plain" }).end("refused: tests reach no network beyond 127.0.0.1")
    })
    // HTTPS through a proxy starts with CONNECT host:port: refused before any byte leaves.
    server.on("connect", (req, socket) => {
      guard.tried.push(`CONNECT ${req.url ?? ""}`)
      socket.end("HTTP/1.1 403 Forbidden\r\n\r\n")
    })
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(0, "127.0.0.1", () => resolve())
    })
    // A sandbox kept for inspection never closes its guard; it must not hold the process open.
    server.unref()
    return guard
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  /** The environment that sends every non-loopback request here. */
  env(): Record<string, string> {
    const noProxy = "127.0.0.1,localhost,::1"
    return { HTTP_PROXY: this.url, HTTPS_PROXY: this.url, http_proxy: this.url, https_proxy: this.url, NO_PROXY: noProxy, no_proxy: noProxy }
  }

  /** Every request that was refused, as "METHOD target". */
  attempts(): string[] {
    return [...this.tried]
  }

  async close(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}
