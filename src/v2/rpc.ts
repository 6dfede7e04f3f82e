// The status and control calls the TUI part (tui.ts) makes to the server part, as one RPC
// contract both import. Schemas are JSON Schema, which OpenCode 2's RPC layer accepts. `events`
// is required even when empty: 2.1.2's register reads Object.entries(definition.events) and
// throws without it.
import type { HostRegistrations } from "../host.js"

export const MEMORY_RPC = Object.freeze({
  id: "opencode-codex-memory",
  methods: {
    status: { input: { type: "object" }, output: { type: "object" } },
    setSwitch: {
      input: {
        type: "object",
        properties: { name: { enum: ["use_memories", "generate_memories"] }, value: { type: "boolean" } },
        required: ["name", "value"],
        additionalProperties: false,
      },
      output: { type: "object" },
    },
    reset: {
      input: { type: "object", properties: { confirm: { const: true } }, required: ["confirm"], additionalProperties: false },
      output: { type: "object" },
    },
  },
  events: {},
})

export type SwitchName = "use_memories" | "generate_memories"

export interface MemoryStatus {
  switches: { use_memories: boolean; generate_memories: boolean }
  /** How sessions are found, in words (the registered service, or only what this process saw). */
  sessions: { source: "host" | "service" | "observed"; detail: string }
  /** What the plugin registered with this OpenCode, and what it refused. */
  registrations: HostRegistrations
  versions: Array<{ version: string; selected: boolean; writes: boolean; lastSuccess?: number; ready?: boolean; readiness?: string }>
  /** memory_inspect's whole report. */
  text: string
}
