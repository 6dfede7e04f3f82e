// The memory folder's guard for ordinary sessions: file tools and patches aimed inside a memory
// root, and shell commands that name one, are refused; reads, other folders and what the user's
// own rules decide are left alone.
import { describe, expect, it } from "vitest"
import { memoryFolderRefusal, userFolderRules } from "../../src/control/memory-folder-guard.js"

const ROOT = "/home/u/.local/share/opencode-codex-memory/memories"
const rules = { roots: [ROOT, "/data/real/memories"], directory: "/home/u/project" }

describe("memoryFolderRefusal", () => {
  it("refuses write, edit and multiedit inside any root form, by absolute or relative path", () => {
    expect(memoryFolderRefusal("write", { filePath: `${ROOT}/memory_summary.md`, content: "x" }, rules)).toMatch(/^the memory folder .* is written only by memory's consolidation/)
    expect(memoryFolderRefusal("edit", { filePath: "/data/real/memories/MEMORY.md" }, rules)).toBeDefined()
    expect(memoryFolderRefusal("multiedit", { filePath: "../.local/share/opencode-codex-memory/memories/x.md" }, { ...rules, directory: "/home/u/project" })).toBeDefined()
    expect(memoryFolderRefusal("write", { path: ROOT }, rules)).toBeDefined()
  })

  it("refuses a patch that adds, updates, deletes or moves a file into a root", () => {
    const patch = (line: string) => ({ patchText: `*** Begin Patch\n${line}\n@@\n-a\n+b\n*** End Patch` })
    expect(memoryFolderRefusal("apply_patch", patch(`*** Update File: ${ROOT}/memory_summary.md`), rules)).toBeDefined()
    expect(memoryFolderRefusal("patch", patch("*** Add File: src/a.ts"), rules)).toBeUndefined()
    expect(memoryFolderRefusal("apply_patch", { patchText: `*** Begin Patch\n*** Update File: src/a.ts\n*** Move to: ${ROOT}/a.ts\n*** End Patch` }, rules)).toBeDefined()
  })

  it("refuses a shell command that names a root, whatever it does with it", () => {
    expect(memoryFolderRefusal("bash", { command: `echo hi >> ${ROOT}/memory_summary.md` }, rules)).toMatch(/^shell commands that name the memory folder/)
    expect(memoryFolderRefusal("shell", { command: `sed -i s/a/b/ /data/real/memories/MEMORY.md` }, rules)).toBeDefined()
    expect(memoryFolderRefusal("bash", { command: "npm test" }, rules)).toBeUndefined()
  })

  it("lets reads, other folders and a folder merely named alike through", () => {
    expect(memoryFolderRefusal("read", { filePath: `${ROOT}/memory_summary.md` }, rules)).toBeUndefined()
    expect(memoryFolderRefusal("write", { filePath: "/home/u/project/notes.md" }, rules)).toBeUndefined()
    expect(memoryFolderRefusal("write", { filePath: `${ROOT}-backup/memory_summary.md` }, rules)).toBeUndefined()
    expect(memoryFolderRefusal("edit", {}, rules)).toBeUndefined()
  })

  it("leaves to the user's own rules what they decide for the folder", () => {
    const decided = userFolderRules({ edit: { [`${ROOT}/notes/*`]: "allow" }, bash: "ask" }, rules.roots)
    expect(decided).toEqual({ files: true, shell: false })
    expect(memoryFolderRefusal("write", { filePath: `${ROOT}/notes/a.md` }, { ...rules, userDecides: decided })).toBeUndefined()
    expect(memoryFolderRefusal("bash", { command: `cat ${ROOT}/MEMORY.md` }, { ...rules, userDecides: decided })).toBeDefined()
    expect(userFolderRules("allow", rules.roots)).toEqual({ files: false, shell: false })
  })
})
