// The project's own import graph, read from source text, and the cycles in it. Pure functions on
// text and maps, so the cycle check itself is tested on fixture graphs (import-graph.test.ts) and
// then applied to src/ and tools/ by architecture.test.ts.
import path from "node:path"

/**
 * Every module specifier a source text loads, in order: `import ... from`, `export ... from`,
 * side-effect `import "x"`, and `import("x")` (dynamic imports, and `typeof import("x")` types).
 * Type-only imports count too: a cycle of types is still a cycle of modules.
 */
export function importSpecifiers(text: string): string[] {
  // Comments may quote imports; strings keep their "//" (URLs) because a comment needs a space or a line start before it.
  const code = text.replace(/(^|\s)\/\*[\s\S]*?\*\//g, "$1").replace(/(^|\s)\/\/.*$/gm, "$1")
  const found: Array<{ at: number; spec: string }> = []
  const patterns = [
    /(?:^|[\n;])\s*(?:import|export)\s[^;"'`]*?\bfrom\s*["']([^"']+)["']/g,
    /(?:^|[\n;])\s*import\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
  ]
  for (const pattern of patterns) for (const match of code.matchAll(pattern)) found.push({ at: match.index, spec: match[1]! })
  return found.sort((a, b) => a.at - b.at).map((entry) => entry.spec)
}

/**
 * Resolves a relative specifier of `from` (a repository-relative path with "/" separators) to one
 * of `files`: "./x.js" is the TypeScript source "./x.ts", a folder is its index.ts. Package
 * imports and anything outside `files` resolve to undefined.
 */
export function resolveSpecifier(from: string, spec: string, files: ReadonlySet<string>): string | undefined {
  if (!spec.startsWith(".")) return undefined
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec))
  const candidates = [target, target.replace(/\.js$/, ".ts"), target.replace(/\.mjs$/, ".mts"), `${target}.ts`, `${target}/index.ts`]
  return candidates.find((candidate) => files.has(candidate))
}

/** file -> the files it imports, for the given sources (path -> text). */
export function importGraph(sources: ReadonlyMap<string, string>): Map<string, string[]> {
  const files = new Set(sources.keys())
  const graph = new Map<string, string[]>()
  for (const [file, text] of sources) {
    const targets = importSpecifiers(text).map((spec) => resolveSpecifier(file, spec, files)).filter((target) => target !== undefined)
    graph.set(file, [...new Set(targets)])
  }
  return graph
}

/**
 * One cycle per strongly connected component that has one (Tarjan), each as a path that starts
 * and ends at the same file, e.g. ["a.ts", "b.ts", "a.ts"]. Empty when the graph is acyclic.
 */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const edges = (node: string) => graph.get(node) ?? []

  const connect = (node: string): void => {
    index.set(node, index.size)
    low.set(node, index.get(node)!)
    stack.push(node)
    onStack.add(node)
    for (const next of edges(node)) {
      if (!index.has(next)) {
        connect(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!))
    }
    if (low.get(node) !== index.get(node)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || edges(node).includes(node)) components.push(component)
  }
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node)
  return components.map((component) => cycleThrough(graph, new Set(component)))
}

/** The shortest way from the component's first file (by name) back to itself, inside the component. */
function cycleThrough(graph: ReadonlyMap<string, readonly string[]>, component: ReadonlySet<string>): string[] {
  const start = [...component].sort()[0]!
  const previous = new Map<string, string>()
  const queue = [start]
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!
    for (const next of graph.get(node) ?? []) {
      if (!component.has(next)) continue
      if (next === start) {
        const chain = [node]
        while (chain[0] !== start) chain.unshift(previous.get(chain[0]!)!)
        return [...chain, start]
      }
      if (!previous.has(next)) {
        previous.set(next, node)
        queue.push(next)
      }
    }
  }
  return [start, start]
}
