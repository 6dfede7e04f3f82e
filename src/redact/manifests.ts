// Kubernetes Secret manifests: every value under `data:` or `stringData:` is a secret, whatever its
// key is called (`extra`, `ca.pem`, `.dockercfg`), and `data` values are only base64, which no other
// rule would call secret. Found from each `kind: Secret` (YAML, or JSON as `kubectl get -o json`
// prints it); the document around it is searched for its data block, which may come before or after.
import { holdsMarker, type Edits } from "./marker.js"
import { isPlaceholder } from "./values.js"

// Used only through exec()/test() after setting lastIndex: no state carries between calls.
const KIND_SECRET = /\bkind\\?["']?[ \t]*:[ \t]*\\?["']?secret\b(?!-)/gi
/** A YAML `data:` or `stringData:` line opening a block (nothing after the colon). */
const YAML_DATA = /^([ \t]*)["']?(?:data|stringData)["']?[ \t]*:[ \t]*(?:#[^\n]*)?$/gm
/** One `key: value` entry line of the block (keys are `[-._a-zA-Z0-9]+`, maybe quoted); group 1 the value. */
const YAML_ENTRY = /[ \t]*(?:"[^"\n]*"|'[^'\n]*'|[-._A-Za-z0-9]+)[ \t]*:(?:[ \t]+([^\n]*))?$/dmy
const JSON_DATA = /"(?:data|stringData)"[ \t]*:[ \t]*\{/g
const JSON_ENTRY = /\s*"(?:[^"\\\n]|\\.)*"\s*:\s*"((?:[^"\\\n]|\\.)*)"\s*(,|\})/dy
/** How far around `kind: Secret` its document is searched; manifests are small. */
const DOCUMENT_REACH = 64 * 1024
const NAME = "kubernetes-secret"

/** Where a value starts and ends in the text, and the value. */
type Span = [number, number, string]

export function kubernetesSecrets(edits: Edits): void {
  const text = edits.text
  if (!/kind/i.test(text) || !/secret/i.test(text)) return
  KIND_SECRET.lastIndex = 0
  for (let kind = KIND_SECRET.exec(text); kind; kind = KIND_SECRET.exec(text)) {
    const [around, end] = documentAround(text, kind.index)
    // Without `---` lines, two Secrets' reaches overlap: the second starts where the first ended.
    const start = Math.max(around, edits.position)
    const document = text.slice(start, end)
    // YAML and JSON data blocks of the document, in the order they stand.
    const found: Span[] = []
    yamlData(found, document, start)
    if (document.includes("{")) jsonData(found, document, start)
    found.sort((a, b) => a[0] - b[0])
    for (const [from, to, value] of found) replace(edits, from, to, value)
    KIND_SECRET.lastIndex = Math.max(KIND_SECRET.lastIndex, end)
  }
}

/**
 * The manifest around `at`: from its `apiVersion` (or the `---` line, whichever is nearer) to the
 * next manifest's `apiVersion` or `---`, within DOCUMENT_REACH either way, so that a ConfigMap shown
 * before or after a Secret keeps its data.
 */
function documentAround(text: string, at: number): [number, number] {
  const floor = Math.max(0, at - DOCUMENT_REACH)
  const ceiling = Math.min(text.length, at + DOCUMENT_REACH)
  const dashBefore = text.lastIndexOf("\n---", at)
  const apiBefore = text.lastIndexOf("apiVersion", at)
  const ownApi = apiBefore >= floor ? lineStart(text, apiBefore) : -1
  const start = Math.max(floor, dashBefore >= 0 ? dashBefore + 1 : 0, ownApi)
  // Without an apiVersion before `kind`, the manifest's own comes after it; the next one ends it.
  let apiAfter = text.indexOf("apiVersion", at)
  if (ownApi < 0 && apiAfter >= 0) apiAfter = text.indexOf("apiVersion", apiAfter + 10)
  const dashAfter = text.indexOf("\n---", at)
  let end = ceiling
  if (dashAfter >= 0 && dashAfter < end) end = dashAfter
  if (apiAfter >= 0 && lineStart(text, apiAfter) < end) end = Math.max(at, lineStart(text, apiAfter))
  return [start, end]
}

function lineStart(text: string, at: number): number {
  return text.lastIndexOf("\n", at) + 1
}

function yamlData(found: Span[], document: string, offset: number): void {
  YAML_DATA.lastIndex = 0
  for (let data = YAML_DATA.exec(document); data; data = YAML_DATA.exec(document)) {
    const dataIndent = data[1]!.length
    let line = data.index + data[0].length + 1
    let entryIndent = -1
    while (line < document.length) {
      const lineEnd = endOfLine(document, line)
      const content = document.slice(line, lineEnd)
      const trimmed = content.trimStart()
      if (!trimmed || trimmed.startsWith("#")) {
        line = lineEnd + 1
        continue
      }
      const indent = content.length - trimmed.length
      if (indent <= dataIndent) break
      if (entryIndent < 0) entryIndent = indent
      YAML_ENTRY.lastIndex = line
      const entry = indent === entryIndent ? YAML_ENTRY.exec(document) : null
      line = entry ? redactEntry(found, document, offset, entry, indent, lineEnd) : lineEnd + 1
    }
    YAML_DATA.lastIndex = Math.max(YAML_DATA.lastIndex, line)
  }
}

/** Redacts one entry's value (a scalar on its line, or the block scalar below it); returns where the next line starts. */
function redactEntry(found: Span[], document: string, offset: number, entry: RegExpExecArray, indent: number, lineEnd: number): number {
  const value = (entry[1] ?? "").trimEnd()
  const valueAt = entry[1] === undefined ? lineEnd : entry.indices![1]![0]
  const valueEnd = valueAt + value.length
  if (/^[|>][-+0-9]*$/.test(value)) {
    // A block scalar: the more deeply indented lines below are its text.
    let first = -1
    let last = -1
    let line = lineEnd + 1
    while (line < document.length) {
      const end = endOfLine(document, line)
      const content = document.slice(line, end)
      const trimmed = content.trimStart()
      if (trimmed && content.length - trimmed.length <= indent) break
      if (trimmed) {
        if (first < 0) first = line + content.length - trimmed.length
        last = end
      }
      line = end + 1
    }
    if (first >= 0) found.push([offset + first, offset + last, document.slice(first, last)])
    return line
  }
  const quote = value[0]
  if ((quote === '"' || quote === "'") && value.endsWith(quote) && value.length >= 2) found.push([offset + valueAt + 1, offset + valueEnd - 1, value.slice(1, -1)])
  else {
    const bare = value.replace(/[ \t]+#.*$/, "")
    found.push([offset + valueAt, offset + valueAt + bare.length, bare])
  }
  return lineEnd + 1
}

function jsonData(found: Span[], document: string, offset: number): void {
  JSON_DATA.lastIndex = 0
  for (let data = JSON_DATA.exec(document); data; data = JSON_DATA.exec(document)) {
    JSON_ENTRY.lastIndex = JSON_DATA.lastIndex
    for (let entry = JSON_ENTRY.exec(document); entry; entry = JSON_ENTRY.exec(document)) {
      const [start, end] = entry.indices![1]!
      found.push([offset + start, offset + end, entry[1]!])
      if (entry[2] === "}") break
    }
    JSON_DATA.lastIndex = Math.max(JSON_DATA.lastIndex, JSON_ENTRY.lastIndex)
  }
}

function replace(edits: Edits, start: number, end: number, value: string): void {
  if (end <= start || start < edits.position || isPlaceholder(value.trim()) || holdsMarker(value)) return
  edits.replace(start, end, NAME)
}

function endOfLine(text: string, at: number): number {
  const end = text.indexOf("\n", at)
  return end < 0 ? text.length : end
}
