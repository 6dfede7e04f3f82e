// zod comes from OpenCode's plugin package (`tool.schema`), so schemas use the same zod
// OpenCode validates tool arguments with, and the plugin carries no second copy.
import { tool } from "@opencode-ai/plugin/tool"

export const z = tool.schema

// Types only: erased at build time, so nothing imports zod directly at run time.
import type { z as zod } from "zod"
export type Infer<T extends zod.ZodType> = zod.infer<T>
export type RawShape = zod.ZodRawShape
export type InferShape<Shape extends zod.ZodRawShape> = zod.infer<zod.ZodObject<Shape>>
