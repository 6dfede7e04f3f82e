// What the tools need from a memory instance. The instance (src/memory.ts) implements it; tests
// can hand in a small fake.
import type { LocalMemoryBackend } from "../src/backend/local-backend.js"
import type { NewNote, WrittenNote } from "../src/backend/notes.js"
import type { ApplyOutcome } from "../src/checkpoint/session-checkpoints.js"
import type { MemoryMode } from "../src/store/memory-store.js"

export interface InspectReport {
  text: string
  data: Record<string, unknown>
}

export type ResetReport =
  | { type: "reset"; outputs: number; jobs: number; files: number; checkpoints: number }
  | { type: "refused"; reason: string }

export interface MemoryToolPorts {
  /** Every version's memory folder: what a reset erases. */
  readonly memoryRoots: readonly string[]
  /** The memory folder a session's tools see: the one of the version the session reads. */
  backendFor(sessionId: string): LocalMemoryBackend
  addNote(input: NewNote): WrittenNote
  inspect(): InspectReport
  /**
   * `checked`: the caller knows the session exists (the calling session itself). Otherwise an id
   * that neither memory nor OpenCode knows is refused with a MemoryError ("unknown_session").
   */
  setMode(sessionId: string, mode: MemoryMode, options?: { checked?: boolean }): Promise<{ previous: MemoryMode; forgotten?: { versions: string[]; queued: string[] } | undefined }>
  reset(): Promise<ResetReport>
}

/** What memory_checkpoint needs: present only when checkpoints are on. */
export interface CheckpointPorts {
  applyCheckpoint(sessionId: string, update: unknown): ApplyOutcome
}
