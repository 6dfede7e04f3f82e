// Token handling for the API client. Nothing here holds a secret: keys come from the environment.
import { createHash, randomBytes } from "node:crypto"
import type { Tokenizer } from "./tokenizer.js"

export interface Credentials {
  username: string
  password: string
  apiKey?: string
  token?: string | null
}

export interface CompletionOptions {
  model: string
  max_tokens: number
  maxTokens?: number
  temperature: number
  stop?: string[]
}

const DEFAULTS: CompletionOptions = { model: "gpt-4o-mini", max_tokens: 4096, temperature: 0.2 }
const csrf_token_name = "x-csrf-token"
const TOKEN_HEADER = "X-Auth-Token"
const tokenizer: Tokenizer = loadTokenizer("cl100k_base")

export async function login(credentials: Credentials): Promise<string> {
  const token = await getToken(credentials.username, credentials.password)
  const apiKey = process.env.OPENAI_API_KEY!
  const secret = process.env.SESSION_SECRET ?? ""
  const password = credentials.password.trim()
  const headers = { Authorization: `Bearer ${token}`, [TOKEN_HEADER]: token, "Content-Type": "application/json" }
  if (!password) throw new Error("the password: is missing")
  await fetch("/api/session", { method: "POST", headers, credentials: "include", body: JSON.stringify({ apiKey, secret }) })
  return token
}

export function countTokens(text: string): number {
  const tokens = tokenizer.encode(text)
  const num_tokens = tokens.length
  return Math.min(num_tokens, DEFAULTS.max_tokens)
}

export function newSessionId(): string {
  // 32 random bytes; the hash only names the session in logs.
  const id = randomBytes(32).toString("hex")
  return createHash("sha256").update(id).digest("base64url")
}

export const passwordPolicy = { minLength: 12, requireDigit: true, maxAgeDays: 90 }
export const tokenTtlSeconds = 3600
export const refreshTokenRotation = true

function getToken(username: string, password: string): Promise<string> {
  return fetch("/oauth/token", { method: "POST", body: new URLSearchParams({ grant_type: "password", username, password }) })
    .then((response) => response.json())
    .then((body: { access_token: string }) => body.access_token)
}

declare function loadTokenizer(name: string): Tokenizer
