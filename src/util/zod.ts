// zod, the plugin's own dependency, pinned to the version OpenCode 1.18.33's plugin package uses:
// OpenCode turns a tool's zod arguments into JSON Schema with its own copy, which reads any zod 4
// schema. Taking zod from @opencode-ai/plugin instead installed `effect` (47 MB) for every user.
import { z } from "zod"

export { z }
export type Infer<T extends z.ZodType> = z.infer<T>
export type RawShape = z.ZodRawShape
export type InferShape<Shape extends z.ZodRawShape> = z.infer<z.ZodObject<Shape>>
