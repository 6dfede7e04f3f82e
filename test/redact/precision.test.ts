// The cases an earlier port got wrong, and their neighbours: key names match as whole words, a
// key's value must look like a value, and prose stays prose. Each list entry is one line of text.
import { describe, expect, it } from "vitest"
import { isSecretKey, keyWords } from "../../src/redact/keys.js"
import { redact } from "../../src/redact/redact.js"
import { isPlaceholder, looksLikeSecret, looksRandom } from "../../src/redact/values.js"

const unchanged = (lines: readonly string[]) => {
  for (const line of lines) expect(redact(line), line).toEqual({ text: line, counts: {} })
}

describe("key names", () => {
  it("match only as whole words, and only as the key's last word", () => {
    unchanged([
      "max_tokens: 4096",
      "max_token: 4096",
      "maxTokens: 4096",
      "tokenizer=cl100k_base",
      "csrf_token_name = 'x-csrf-token'",
      "token_count: 1234567890",
      "num_tokens = len(tokens)",
      "token_type: bearer",
      "tiktoken: ^1.0.15",
      "keyboard: us-intl-2024",
      "monkey: banana123456",
      "passport: X1234567890",
      "secretName: api-tls-2024",
      "TOKEN_URL=https://auth.acme.dev/oauth/token",
      "password_min_length: 12",
      "PASSWORD_RESET_TIMEOUT=3600",
    ])
  })

  it("are cut at underscores, dashes, dots and camelCase humps", () => {
    expect(keyWords("AWS_SECRET_ACCESS_KEY")).toEqual(["aws", "secret", "access", "key"])
    expect(keyWords("spring.datasource.password")).toEqual(["spring", "datasource", "password"])
    expect(keyWords("clientSecret")).toEqual(["client", "secret"])
    expect(keyWords("X-API-Key")).toEqual(["x", "api", "key"])
    expect(keyWords("APIKey")).toEqual(["api", "key"])
  })

  it("name a secret by their last word, or `key` after a qualifier, or a known one-word form", () => {
    for (const key of ["password", "DB_PASSWORD", "apiKey", "x-api-key", "client_secret", "authToken", "PGPASSWORD", "dbpass", "signing-key", "GITHUB_TOKEN"]) {
      expect(isSecretKey(keyWords(key)), key).toBe(true)
    }
    for (const key of ["key", "public_key", "sort_key", "token_limit", "max_token", "eos_token", "next_page_token", "mock_password", "NEXT_PUBLIC_API_KEY", "tokenizer", "tiktoken", "csrf_token_name"]) {
      expect(isSecretKey(keyWords(key)), key).toBe(false)
    }
  })
})

describe("values", () => {
  it("leave placeholders, templates and references alone", () => {
    unchanged([
      "API_KEY=<your api key>",
      "API_KEY=your-api-key-here",
      "token: ${{ secrets.GITHUB_TOKEN }}",
      'password: "${DB_PASSWORD}"',
      "PASSWORD=$(cat /run/secrets/db)",
      "SECRET_KEY=changeme",
      "keystore_password=changeit",
      'token = "xxxxxxxxxxxxxxxx"',
      '"password": "********"',
      '"apiKey": "sk-..."',
      "ANTHROPIC_API_KEY=sk-ant-...",
      "password: ENC[AES256_GCM,data:Tm90IGEgc2VjcmV0,type:str]",
      "password: !vault |",
      "password: *default_password",
      "jwt_secret: '{{ jwt_secret }}'",
      "DB_PASSWORD=%DB_PASSWORD%",
      'password = ""',
      "password: null",
    ])
  })

  it("leave types, variables and calls in code alone", () => {
    unchanged([
      "  password: string;",
      "  token?: string",
      "  password: String!",
      "  api_key: Option<SecretString>,",
      "const token = await getToken()",
      "token := os.Getenv(\"API_TOKEN\")",
      "self.password = password",
      "password = None",
      "apiKey: process.env.OPENAI_API_KEY!,",
      "secret = secrets.token_hex(32)",
      "const secret = config.secret",
      "if (password == userInput) return",
      "fetch(url, { credentials: \"same-origin\" })",
      "login(username, password) => session",
    ])
  })

  it("leave words alone where a label, a mode or a type is usual", () => {
    unchanged(['"password": "Password"', '"token": "Token"', "credentials: include", "auth: oauth2", '"auth": "bearer"', "secret: true", "password: required"])
  })

  it("take a random-looking value even in weak contexts, and any literal in strong ones", () => {
    expect(redact("login failed: invalid password: Hunter2024x").counts).toEqual({ "secret-assignment": 1 })
    expect(redact('const password = "correcthorse"').text).toBe('const password = "correcthorse"')
    expect(redact('const password = "correct-horse-7"').text).toBe('const password = "[REDACTED:secret-assignment]"')
    expect(redact("password: 12345678").text).toBe("password: [REDACTED:secret-assignment]")
    expect(redact("password: 1234").text).toBe("password: 1234")
  })

  it("are classified by small predicates", () => {
    expect(isPlaceholder("<token>")).toBe(true)
    expect(isPlaceholder("your_token_here")).toBe(true)
    expect(isPlaceholder("s3cr3t-Value")).toBe(false)
    expect(looksRandom("a1b2c3d4")).toBe(true)
    expect(looksRandom("missing")).toBe(false)
    expect(looksLikeSecret("correcthorsebatterystaple")).toBe(true)
    expect(looksLikeSecret("correctHorseBatteryStaple")).toBe(false)
  })
})

describe("prose", () => {
  it("stays prose", () => {
    unchanged([
      "the token: is missing",
      "Error: the token: is missing or expired",
      "password reset emails are sent by the worker",
      "Secret: there is none, the vault holds it.",
      "The API key: rotate it every 90 days.",
      "Use the --password flag to set it, or --token to pass a token.",
      "Bearer tokens expire after an hour.",
      "the Authorization header is required",
      "keys start with sk- and are shown once",
      "Token: 4096 max per request",
    ])
  })

  it("loses a secret it spells out", () => {
    expect(redact("my password: Summer2024x").text).toBe("my password: [REDACTED:secret-assignment]")
  })
})

describe("non-secret strings that look random", () => {
  it("stay: hashes, ids, integrity strings, public keys and certificates", () => {
    unchanged([
      "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
      "request_id=8f14e45f-ceea-467a-9575-3b1d2e9a7c21",
      '"integrity": "sha512-PRp66vJ865SSqOlgqS8hujT5U4AOgMfhrwYIuIhfKaoSCZcirrmASQr8CX7cUg+RMih+hgznrjp99o+W4pJLHQ=="',
      "image: ghcr.io/acme/api@sha256:3c1f9a2e8b7d6c5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a",
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl deploy@acme",
      "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ6T3Ujq9ZHk8sOCm4V2LZ2Pp5TYwCgYIKoZIzj0EAwIw\n-----END CERTIFICATE-----",
      "STRIPE_PUBLISHABLE_KEY=pk_live_51HqLyjWDarjtT1zdp7dcXz0abcdef",
      "NEXT_PUBLIC_API_KEY=pk_live_51HqLyjWDarjtT1zdp7dcXz0abcdef",
      "postgres://user:password@localhost:5432/app",
      "http://localhost:8080/health",
      "https://deploy@registry.acme.dev/v2/",
    ])
  })
})

describe("passwords in URLs, connection strings and command lines", () => {
  it("leave ports, paths, queries and addresses that only look like a user and a password", () => {
    unchanged([
      "https://api.acme.dev:8080/search?email=ops@acme.dev",
      "postgres://localhost:5432 is where ops@acme.dev looks first",
      "see https://admin:docs and write to ops@acme.dev",
      "redis://cache:6379/0?client=worker@host",
      "postgres://user:${DB_PASSWORD}@db:5432/app",
      "mysql://root:<password>@localhost/shop",
      "host=db port=5432 dbname=app user=app password=${PGPASSWORD}",
      "jdbc:mysql://db:3306/shop?user=shop&password=",
    ])
  })

  it("leave lines with colons that are not .pgpass lines", () => {
    unchanged(["2026-03-01T09:31:00Z INFO worker:12:started:ok:yes", "fe80:0:0:0:1", "root:x:0:0:root:/root:/bin/bash", "db:5432:app:app:${PGPASSWORD}"])
  })

  it("leave curl credentials that are stand-ins", () => {
    unchanged([
      'curl --user "xxx:yyy" https://api.acme.dev',
      "curl --user neo4j:[PASSWORD] http://[IP]:7474/db/data/",
      "curl -i -u 'test:test' https://localhost",
      "curl -u <user:password> https://api.acme.dev/endpoint",
      "curl http://127.0.0.1:5000/file --user user:pass --digest",
      'curl -u "$USER:$TOKEN" https://api.acme.dev',
      "curl --user ops@acme.dev: https://api.acme.dev",
    ])
  })
})

describe("assignment syntaxes beyond = and :", () => {
  it("leave types, calls, comparisons and templates in the new syntaxes", () => {
    unchanged([
      "const token: string = getToken()",
      "let password: string = ''",
      "var apiToken string = os.Getenv(\"API_TOKEN\")",
      "if token == expected {",
      "TOKEN ?= $(shell cat .token)",
      "API_TOKEN ::= ${CI_TOKEN}",
      "$password .= $suffix;",
      "<token>${TOKEN}</token>",
      "<password></password>",
      "<password>\n  <value>from-vault</value>\n</password>",
      't("password", "Password")',
      'const labels = ["token", "secret", "password"]',
      'headers.set("X-Api-Key", apiKey)',
      'os.environ.get("API_TOKEN", "")',
      '<add key="ClearTextPassword" value="%NUGET_PASSWORD%" />',
      '<input type="hidden" name="authenticity_token" value="7SWa-Fo1_hsC6oovfBsSaFTkkD4f2vJ2a1b2c3d4e5" />',
    ])
  })
})

describe("formats added for more services", () => {
  it("leave look-alikes: file names, placeholders, runs of one character, base64 that is not a JWT", () => {
    unchanged([
      "http://assets.acme.dev/media/video_box.ico-7a388b6901bd4a1c9e0d2f3a4b5c6d7e8f",
      '--set kubeconfig.token="sha256~XXXXXXXXXX_PUT_YOUR_TOKEN_HERE_XXXXXXXXXXXXXX"',
      "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
      "xoxb-000000000000-0000000000000-xxxxxxxxxxxxxxxxxxxxxxxx",
      `payload: ${btoa("eyJ this is prose that merely starts like a token and goes on for a while")}`,
      "the jwt is eyJhbGciOiJIUzI1NiJ9 and nothing more",
      "sm_pat_short",
      "A3-ENGLISH-WORDS",
      "access-sandbox-token is documented in the Plaid guide",
    ])
  })
})

describe("keys named after a service", () => {
  it("leave versions, settings and ids under a service's name", () => {
    unchanged([
      '"cloudflare": "^4.20.0",',
      '"snyk": "1.1291.0"',
      "cloudflare: true",
      "sourcegraph: https://sourcegraph.acme.dev",
      "heroku_app_id: 4f9a2c1e-7b3d-4e5f-8a9b-0c1d2e3f4a5b",
      "SONAR_HOST_URL=https://sonar.acme.dev",
      "BUNDLE_PATH=vendor/bundle",
      "BUNDLE_GEMS__ACME__DEV=${GEM_SERVER_CREDENTIALS}",
    ])
  })

  it("cut a trailing number off a key's words", () => {
    expect(keyWords("api_token_123")).toEqual(["api", "token"])
    expect(isSecretKey(keyWords("BUNDLE_GEMS__ACME__DEV"), "BUNDLE_GEMS__ACME__DEV")).toBe(true)
    expect(isSecretKey(keyWords("BUNDLE_PATH"), "BUNDLE_PATH")).toBe(false)
  })
})

describe("Kubernetes manifests", () => {
  it("leave ConfigMaps, templated or empty Secret data, and references to Secrets", () => {
    unchanged([
      "apiVersion: v1\nkind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n  FEATURE_FLAGS: a1b2c3d4e5f6\n",
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api\nstringData:\n  password: \"\"\n  token: ${API_TOKEN}\n  key: '{{ .Values.key | b64enc }}'\n",
      "kind: SealedSecret\nspec:\n  encryptedData:\n    extra: AgBy3i4OJSWK+PiTySYZZA==\n",
      "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: api-secrets\n        key: db-password\n",
      "the kind: Secret object holds data: see the docs",
      "apiVersion: v1\nkind: ConfigMap\ndata:\n  release: a1b2c3d4e5f6\n\napiVersion: v1\nkind: Secret\nmetadata:\n  name: x\n",
    ])
  })
})

