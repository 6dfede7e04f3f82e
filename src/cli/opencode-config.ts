// The plugin's options as OpenCode's global config gives them, so the CLI resolves the same home
// and version as the plugin, on either line. OpenCode reads opencode.jsonc, opencode.json and
// config.json from $XDG_CONFIG_HOME/opencode (else ~/.config/opencode; OpenCode 2 reads the same
// folder); the first that exists is the config.
import fs from "node:fs"
import path from "node:path"
import { parse, printParseErrorCode, type ParseError } from "jsonc-parser"
import { PLUGIN_ID } from "../constants.js"
import { packageRoot } from "../util/package-root.js"

export interface GlobalConfig {
  /** The config file found, if any. */
  file: string | undefined
  /** The parsed config, or undefined when there is none or it could not be read. */
  config: Record<string, unknown> | undefined
  /** Why it could not be read. */
  error?: string
}

const NAMES = ["opencode.jsonc", "opencode.json", "config.json"]

export function readGlobalConfig(env: Readonly<Record<string, string | undefined>>, homedir: string): GlobalConfig {
  const dir = path.join(env.XDG_CONFIG_HOME?.trim() || path.join(homedir, ".config"), "opencode")
  const file = NAMES.map((name) => path.join(dir, name)).find((candidate) => fs.existsSync(candidate))
  if (!file) return { file: undefined, config: undefined }
  try {
    const errors: ParseError[] = []
    // OpenCode's own config syntax: JSON with comments and trailing commas.
    const value = parse(fs.readFileSync(file, "utf8"), errors, { allowTrailingComma: true }) as unknown
    if (errors.length) return { file, config: undefined, error: `${printParseErrorCode(errors[0]!.error)} at offset ${errors[0]!.offset}` }
    if (typeof value !== "object" || value === null || Array.isArray(value)) return { file, config: undefined, error: "not a JSON object" }
    return { file, config: value as Record<string, unknown> }
  } catch (error) {
    return { file, config: undefined, error: (error as Error).message }
  }
}

/** The plugin's entry in OpenCode's config, with its options and the config line it is written in. */
export interface PluginEntry {
  spec: string
  options: Record<string, unknown>
  /** 1: the `plugin` list of OpenCode 1.x; 2: the `plugins` list of OpenCode 2. */
  line: 1 | 2
}

/**
 * The plugin's entry, from either line's list: 1.x's `plugin: ["spec" | ["spec", {options}]]`, or
 * 2.x's `plugins: ["spec" | {package, options}]` (F4 of the 2.1.2 facts; a string gets no options,
 * a leading "-" removes). `configFile` resolves a `./` or `../` path as OpenCode 2 does, against
 * the config's own folder.
 */
export function pluginEntry(config: Record<string, unknown> | undefined, packageDir: string = packageRoot(), configFile?: string): PluginEntry | undefined {
  const mine = (spec: string) => spec.includes(PLUGIN_ID) || isThisPackage(spec, packageDir, configFile)
  for (const entry of Array.isArray(config?.plugins) ? config.plugins : []) {
    const spec = typeof entry === "string" ? entry : typeof (entry as { package?: unknown } | null)?.package === "string" ? (entry as { package: string }).package : undefined
    if (!spec || spec.startsWith("-") || !mine(spec)) continue
    const options = typeof entry === "object" && entry !== null ? (entry as { options?: unknown }).options : undefined
    return { spec, options: typeof options === "object" && options !== null && !Array.isArray(options) ? (options as Record<string, unknown>) : {}, line: 2 }
  }
  for (const entry of Array.isArray(config?.plugin) ? config.plugin : []) {
    const spec = typeof entry === "string" ? entry : Array.isArray(entry) && typeof entry[0] === "string" ? entry[0] : undefined
    if (!spec || !mine(spec)) continue
    const options = Array.isArray(entry) && typeof entry[1] === "object" && entry[1] !== null ? (entry[1] as Record<string, unknown>) : {}
    return { spec, options, line: 1 }
  }
  return undefined
}

/** A local path spec (`file://…` or a path) into this package's folder: a checkout installed by path. */
function isThisPackage(spec: string, packageDir: string, configFile?: string): boolean {
  let file = spec.startsWith("file://") ? decodeURIComponent(spec.slice("file://".length)) : spec
  if ((file.startsWith("./") || file.startsWith("../")) && configFile) file = path.resolve(path.dirname(configFile), file)
  if (!path.isAbsolute(file)) return false
  const relative = path.relative(path.resolve(packageDir), path.resolve(file))
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
}
