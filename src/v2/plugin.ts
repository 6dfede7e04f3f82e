// OpenCode 2 entry: `setup(ctx)`, called once per location. Every location of one plugin
// definition shares one runtime (runtime.ts), which owns the memory instance.
import type { V2Cleanup, V2Context, V2RegistrationContext } from "./api.js"
import { V2Runtime, type V2RuntimeDeps } from "./runtime.js"

export function createV2Setup(deps: V2RuntimeDeps): (ctx: V2Context | V2RegistrationContext) => Promise<V2Cleanup> {
  const runtime = new V2Runtime(deps)
  return (ctx) => runtime.setup(ctx)
}
