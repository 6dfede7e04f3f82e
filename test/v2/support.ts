// Our plugin on the OpenCode 2 fake, in a throw-away home: what the V2 adapter tests share.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { createV2Setup } from "../../src/v2/plugin.js"
import type { V2Plugin } from "../../src/v2/api.js"
import type { V2RuntimeDeps } from "../../src/v2/runtime.js"
import { FakeOpenCode2, type FakeVariant } from "../fakes/opencode2.js"

export const PACKAGE_DIR = fileURLToPath(new URL("../..", import.meta.url))
export const HOUR = 3_600_000

export interface V2Setup {
  fake: FakeOpenCode2
  /** A fresh plugin definition (its own runtime), as a new OpenCode 2 process would load it. */
  plugin: (extra?: Partial<V2RuntimeDeps>) => V2Plugin
  root: string
  home: string
  stateDir: string
  /** The first project folder; `project(name)` makes more. */
  projectDir: string
  project(name: string): string
  logs: string[]
  env: Record<string, string>
  cleanup(): Promise<void>
}

export function v2Setup(options: { clockOffsetMs?: number; variant?: FakeVariant } = {}): V2Setup {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocm-v2-"))
  const home = path.join(root, "memory-home")
  const stateDir = path.join(root, "state")
  const project = (name: string) => {
    const dir = path.join(root, name)
    fs.mkdirSync(dir, { recursive: true })
    return dir
  }
  const logs: string[] = []
  const env: Record<string, string> = { OPENCODE_CODEX_MEMORY_TEST_ROOT: home, XDG_STATE_HOME: stateDir }
  if (options.clockOffsetMs) env.OPENCODE_CODEX_MEMORY_TEST_CLOCK_OFFSET_MS = String(options.clockOffsetMs)
  const fake = new FakeOpenCode2(options.variant)
  return {
    fake,
    plugin: (extra = {}) => ({ id: "opencode-codex-memory", setup: createV2Setup({ env, homedir: root, packageDir: PACKAGE_DIR, log: (line) => logs.push(line), ...extra }) }),
    root,
    home,
    stateDir,
    projectDir: project("project"),
    project,
    logs,
    env,
    cleanup: async () => {
      await fake.disposeAll()
      fs.rmSync(root, { recursive: true, force: true })
    },
  }
}

export async function settle(ms = 50): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}
