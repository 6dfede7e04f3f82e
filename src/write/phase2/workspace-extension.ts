// A source of workspace input kept in an extension folder by code rather than by the user (the
// imports from Codex and Claude Code), and an action after a good consolidation (the export to
// Codex). Phase 2 runs each one inside its claimed job: `sync` after the workspace is prepared
// and before the diff is taken, so what it changed is consolidated in the same run; `afterSuccess`
// once the run's artifacts are valid and the job is done. Neither can fail the consolidation.
export interface ExtensionSync {
  changed: boolean
  /** What happened, in a few words, for the log and memory_inspect. */
  detail: string
}

export interface WorkspaceExtension {
  readonly name: string
  /** Cheap: whether the source holds anything, so a first consolidation runs for it alone. */
  hasSource(): boolean
  sync?(root: string): ExtensionSync | Promise<ExtensionSync>
  afterSuccess?(root: string): ExtensionSync | Promise<ExtensionSync>
  /** One line for memory_inspect: where it reads or writes, and what its last run did. */
  describe(): string
}
