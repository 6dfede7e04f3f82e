// capabilities and check-compatibility: what this build speaks, answered without a memory home.
import { CliError } from "../errors.js"
import { intFlag } from "../args.js"
import type { Command } from "../command.js"
import { ARCHIVE_VERSION } from "../../archive/format.js"
import { MIGRATIONS, V2_MIGRATIONS } from "../../store/migrations.js"
import { packageVersion } from "../version.js"

/** The CLI's JSON contract; bumped only when an existing command's output changes incompatibly. */
export const PROTOCOL_VERSION = 1
const SUPPORTED_PROTOCOLS = [1]

export function capabilities() {
  return {
    name: "opencode-codex-memory",
    version: packageVersion(),
    protocol_version: PROTOCOL_VERSION,
    supported_protocols: SUPPORTED_PROTOCOLS,
    schema_versions: { "memory.db": MIGRATIONS.length, "memory_v2.db": V2_MIGRATIONS.length, archive: ARCHIVE_VERSION },
    memory_versions: ["v1", "v2"],
    hosts: [
      { host: "opencode1", tested: "1.18.33" },
      { host: "opencode2", tested: "the OpenCode 2 plugin API (setup)" },
    ],
  }
}

export const capabilitiesCommand: Command = {
  name: "capabilities",
  usage: "capabilities",
  summary: "what this build supports (no memory home needed)",
  flags: {},
  positionals: { min: 0, max: 0 },
  async run() {
    const json = capabilities()
    return { json, text: `${json.name} ${json.version}, protocol ${json.protocol_version}, memory.db schema ${json.schema_versions["memory.db"]}, memory versions ${json.memory_versions.join(", ")}` }
  },
}

export const checkCompatibilityCommand: Command = {
  name: "check-compatibility",
  usage: "check-compatibility --protocol N",
  summary: "exit 0 only if protocol N is supported",
  flags: { protocol: { type: "string" } },
  positionals: { min: 0, max: 0 },
  async run({ args }) {
    if (args.values.protocol === undefined) throw new CliError("usage", "--protocol N is required")
    const protocol = intFlag(args.values.protocol, "protocol", 0, 0, 1_000_000)
    if (!SUPPORTED_PROTOCOLS.includes(protocol)) throw new CliError("incompatible", `protocol ${protocol} is not supported; this build speaks ${SUPPORTED_PROTOCOLS.join(", ")}`)
    return { json: { compatible: true, protocol_version: protocol }, text: `protocol ${protocol}: compatible` }
  },
}
