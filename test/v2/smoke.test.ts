import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"
import { createV2Setup } from "../../src/v2/plugin.js"
import { FakeOpenCode2 } from "../fakes/opencode2.js"

it("smoke", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-v2-"))
  const home = path.join(root, "memory-home")
  const project = path.join(root, "project")
  fs.mkdirSync(project)
  fs.mkdirSync(path.join(home, "memories"), { recursive: true })
  fs.writeFileSync(path.join(home, "memories", "memory_summary.md"), "v1\n## User profile\nLikes tabs.\n")
  const fake = new FakeOpenCode2()
  const plugin = { id: "opencode-codex-memory", setup: createV2Setup({ env: { OPENCODE_CODEX_MEMORY_TEST_ROOT: home, XDG_STATE_HOME: path.join(root, "state") }, homedir: root, packageDir: "/work/main" }) }
  await fake.setup(plugin, project)
  await new Promise((r) => setTimeout(r, 200))
  console.log(fake.nativeTools(project))
  const s = await fake.createSession(project, "hi")
  await fake.prompt(s, "hello")
  console.log(JSON.stringify(fake.requests.at(-1)?.system).slice(0, 300))
  console.log(fake.events.map(e => e.type))
  await fake.disposeAll()
})
