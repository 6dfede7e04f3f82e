// Keeps racing worker processes alive until all of them have claimed. A worker that exited would
// be a gone lease owner, and a slower sibling would rightly take its claims over at once.
import fs from "node:fs"
import path from "node:path"

export function waitForPeers(file: string, count: number, timeoutMs = 30_000): void {
  const prefix = `${path.basename(file)}.claimed-`
  fs.writeFileSync(path.join(path.dirname(file), `${prefix}${process.pid}`), "")
  const deadline = Date.now() + timeoutMs
  while (fs.readdirSync(path.dirname(file)).filter((name) => name.startsWith(prefix)).length < count) {
    if (Date.now() > deadline) throw new Error(`only some of ${count} workers claimed within ${timeoutMs} ms`)
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10)
  }
}
