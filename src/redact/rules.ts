// Secret formats that carry their own shape: a vendor prefix, a fixed length, a fixed alphabet.
// Each rule names one class; the class is the marker that replaces the secret
// (`[REDACTED:<class>]`), so a reader knows what kind of value was there without seeing it.
//
// Prefixed rules are found by ONE scan for all prefixes at once (redact.ts); a rule's own pattern
// then runs only where its prefix stands, anchored there (sticky). Rules without a prefix of
// their own run as separate scans, and only when their literal hint occurs in the text.
// Publishable keys meant to ship in web pages (Stripe `pk_live_`) are not secrets and not listed.

export interface PrefixRule {
  /** Marker class, e.g. "github-token". */
  readonly name: string
  /** Literal starts of the secret (or of the text around it); at a word boundary. */
  readonly prefixes: readonly string[]
  /** Sticky pattern matched where a prefix starts. */
  readonly pattern: RegExp
  /** Capture group holding the secret (its pattern gets the `d` flag, for the group's position); the whole match when absent. */
  readonly group?: number
  /** Extra check of the secret and its surroundings, for shapes that ordinary text can take. */
  readonly validate?: (secret: string, text: string, at: number) => boolean
}

export interface ScanRule {
  readonly name: string
  /** The rule is skipped unless this occurs in the text; undefined: always scanned. */
  readonly hint?: string
  /** Global pattern; the whole match is the secret. */
  readonly pattern: RegExp
  readonly validate?: (secret: string) => boolean
}

/** Random strings mix cases and digits; names and words rarely do. */
const mixed = (secret: string) => /\d/.test(secret) && /[a-z]/.test(secret) && /[A-Z]/.test(secret)
const hasDigit = (secret: string) => /\d/.test(secret)

const rule = (name: string, prefixes: string[], source: string, extra: Partial<PrefixRule> = {}): PrefixRule => ({
  name,
  prefixes,
  pattern: new RegExp(source, extra.group ? "yd" : "y"),
  ...extra,
})

// Lengths are bounded above, so a long run of token-like text costs each prefix hit a bounded scan.
// Order matters where prefixes overlap: the more specific rule comes first (`sk-ant-` before `sk-`).
export const PREFIX_RULES: readonly PrefixRule[] = Object.freeze([
  // Cloud providers
  rule("aws-access-key", ["AKIA", "ASIA", "ABIA", "ACCA"], String.raw`(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])`),
  rule("aws-session-token", ["IQoJb3JpZ2luX2Vj", "FwoGZXIvYXdzE", "FQoGZXIvYXdzE"], String.raw`(?:IQoJb3JpZ2luX2Vj|F[wQ]oGZXIvYXdzE)[A-Za-z0-9/+=]{100,4096}`),
  rule("google-api-key", ["AIza"], String.raw`AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])`),
  rule("google-oauth-client-secret", ["GOCSPX-"], String.raw`GOCSPX-[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])`),
  rule("google-oauth-token", ["ya29.", "1//0"], String.raw`(?:ya29\.[A-Za-z0-9_-]{30,2048}|1\/\/0[A-Za-z0-9_-]{40,512})`, { validate: mixed }),
  rule("azure-storage-key", ["AccountKey="], String.raw`AccountKey=([A-Za-z0-9+/]{86}==)`, { group: 1 }),
  rule("azure-shared-access-key", ["SharedAccessKey="], String.raw`SharedAccessKey=([A-Za-z0-9+/]{42,43}={0,2})(?![A-Za-z0-9+/=])`, { group: 1 }),
  rule("azure-sas-token", ["sig="], String.raw`sig=([A-Za-z0-9%+/]{30,512}(?:%3D|=){0,2})`, {
    group: 1,
    // A SAS URL: the signature is a query parameter of a URL that also states the SAS version.
    validate: (_secret, text, at) => (text[at - 1] === "&" || text[at - 1] === "?") && /[?&]sv=\d{4}-/.test(text.slice(Math.max(0, at - 600), at)),
  }),
  rule("digitalocean-token", ["dop_v1_", "doo_v1_", "dor_v1_"], String.raw`do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9])`),
  rule("heroku-api-key", ["HRKU-"], String.raw`HRKU-[A-Za-z0-9_-]{30,256}`),
  rule("hashicorp-vault-token", ["hvs.", "hvb.", "hvr."], String.raw`hv[sbr]\.[A-Za-z0-9_-]{24,512}`, { validate: mixed }),
  rule("databricks-token", ["dapi"], String.raw`dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])`, { validate: hasDigit }),
  rule("age-secret-key", ["AGE-SECRET-KEY-1"], String.raw`AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}(?![A-Za-z0-9])`),

  // Source hosting, package registries, CI
  rule("github-token", ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], String.raw`gh[pousr]_[A-Za-z0-9]{36,251}(?![A-Za-z0-9])`),
  rule("github-fine-grained-token", ["github_pat_"], String.raw`github_pat_[A-Za-z0-9_]{40,255}(?![A-Za-z0-9_])`),
  rule("gitlab-runner-token", ["glrt-", "GR1348941"], String.raw`(?:glrt-|GR1348941)[A-Za-z0-9_-]{20,256}(?:\.[A-Za-z0-9]{2,64}){0,3}`),
  rule("gitlab-ci-job-token", ["glcbt-"], String.raw`glcbt-[A-Za-z0-9_-]{20,256}(?:\.[A-Za-z0-9]{2,64}){0,3}`),
  rule(
    "gitlab-token",
    ["glpat-", "gldt-", "glft-", "glsoat-", "gloas-", "glptt-", "glimt-", "glagent-", "glffct-"],
    String.raw`gl(?:pat|dt|ft|soat|oas|ptt|imt|agent|ffct)-[A-Za-z0-9_-]{20,256}(?:\.[A-Za-z0-9]{2,64}){0,3}`,
  ),
  rule("bitbucket-token", ["ATBB", "ATCTT3xFfGN0"], String.raw`(?:ATBB[A-Za-z0-9]{28,128}|ATCTT3xFfGN0[A-Za-z0-9_=-]{100,512})(?![A-Za-z0-9_=-])`, { validate: mixed }),
  rule("atlassian-api-token", ["ATATT3xFfGF0"], String.raw`ATATT3xFfGF0[A-Za-z0-9_=-]{100,512}`),
  rule("npm-token", ["npm_"], String.raw`npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])`, { validate: mixed }),
  rule("pypi-token", ["pypi-AgE"], String.raw`pypi-AgE[A-Za-z0-9_-]{50,1024}`),
  rule("rubygems-api-key", ["rubygems_"], String.raw`rubygems_[a-f0-9]{48}(?![A-Za-z0-9])`),
  rule("nuget-api-key", ["oy2"], String.raw`oy2[a-z0-9]{43}(?![A-Za-z0-9])`, { validate: hasDigit }),
  rule("dockerhub-token", ["dckr_pat_", "dckr_oat_"], String.raw`dckr_(?:pat|oat)_[A-Za-z0-9_-]{24,128}`),
  rule("circleci-token", ["CCIPAT_", "CCIPRJ_"], String.raw`CCIP(?:AT|RJ)_[A-Za-z0-9]{22}_[a-f0-9]{40}(?![A-Za-z0-9])`),
  rule("sentry-token", ["sntrys_", "sntryu_"], String.raw`sntry[su]_[A-Za-z0-9+/=_-]{40,1024}`),
  rule("postman-api-key", ["PMAK-"], String.raw`PMAK-[a-f0-9]{24}-[a-f0-9]{34}(?![A-Za-z0-9])`),
  rule("doppler-token", ["dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."], String.raw`dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,256}`),
  rule("linear-api-key", ["lin_api_"], String.raw`lin_api_[A-Za-z0-9]{40}(?![A-Za-z0-9])`),
  rule("notion-token", ["ntn_"], String.raw`ntn_[A-Za-z0-9]{40,128}`, { validate: mixed }),
  rule("grafana-token", ["glsa_", "glc_"], String.raw`(?:glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}(?![A-Za-z0-9])|glc_[A-Za-z0-9+/=_-]{32,1024})`),
  rule("newrelic-api-key", ["NRAK-"], String.raw`NRAK-[A-Z0-9]{27}(?![A-Za-z0-9])`),
  rule("planetscale-token", ["pscale_tkn_", "pscale_pw_", "pscale_oauth_"], String.raw`pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,256}`),
  rule("supabase-token", ["sbp_", "sb_secret_"], String.raw`(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{20,256})(?![A-Za-z0-9])`),

  // Chat
  rule("slack-token", ["xox"], String.raw`xox(?:e\.xox[a-z]|[a-z])-[A-Za-z0-9-]{10,256}`, { validate: hasDigit }),
  rule("slack-app-token", ["xapp-"], String.raw`xapp-\d-[A-Za-z0-9-]{20,256}`),
  rule("slack-webhook", ["https://hooks.slack.com/"], String.raw`https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/([A-Za-z0-9_/+-]{20,256})`, { group: 1 }),
  rule(
    "discord-webhook",
    ["https://discord", "https://ptb.discord", "https://canary.discord"],
    String.raw`https:\/\/(?:(?:ptb|canary)\.)?discord(?:app)?\.com\/api(?:\/v\d+)?\/webhooks\/\d+\/([A-Za-z0-9_-]{60,128})`,
    { group: 1 },
  ),

  // Payments, mail, commerce
  rule("stripe-secret-key", ["sk_live_", "sk_test_"], String.raw`sk_(?:live|test)_[A-Za-z0-9]{20,256}`),
  rule("stripe-restricted-key", ["rk_live_", "rk_test_"], String.raw`rk_(?:live|test)_[A-Za-z0-9]{20,256}`),
  rule("stripe-webhook-secret", ["whsec_"], String.raw`whsec_[A-Za-z0-9+/=]{24,128}`),
  rule("square-oauth-secret", ["sq0csp-"], String.raw`sq0csp-[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])`),
  rule("square-access-token", ["sq0atp-", "EAAA"], String.raw`(?:sq0atp-[A-Za-z0-9_-]{22}|EAAA[A-Za-z0-9_+-]{60,256})(?![A-Za-z0-9_-])`, { validate: hasDigit }),
  rule("braintree-access-token", ["access_token$production$", "access_token$sandbox$"], String.raw`access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}`),
  rule("shopify-shared-secret", ["shpss_"], String.raw`shpss_[a-fA-F0-9]{32}(?![A-Za-z0-9])`),
  rule("shopify-access-token", ["shpat_", "shpca_", "shppa_"], String.raw`shp(?:at|ca|pa)_[a-fA-F0-9]{32}(?![A-Za-z0-9])`),
  rule("sendgrid-api-key", ["SG."], String.raw`SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])`),
  rule("mailgun-api-key", ["key-"], String.raw`key-[0-9a-f]{32}(?![A-Za-z0-9])`, { validate: hasDigit }),
  rule("twilio-api-key", ["SK"], String.raw`SK[0-9a-fA-F]{32}(?![A-Za-z0-9])`, { validate: hasDigit }),

  // Model providers
  rule("anthropic-api-key", ["sk-ant-"], String.raw`sk-ant-[A-Za-z0-9_-]{20,256}`, { validate: hasDigit }),
  rule("openrouter-api-key", ["sk-or-v1-"], String.raw`sk-or-v1-[a-f0-9]{64}(?![A-Za-z0-9])`),
  rule("deepseek-api-key", ["sk-"], String.raw`sk-[a-f0-9]{32}(?![A-Za-z0-9_-])`, { validate: hasDigit }),
  rule("openai-api-key", ["sk-"], String.raw`sk-(?:(?:proj|svcacct|admin|None)-)?[A-Za-z0-9_-]{20,512}`, { validate: mixed }),
  rule("huggingface-token", ["hf_", "api_org_"], String.raw`(?:hf_|api_org_)[A-Za-z0-9]{30,64}(?![A-Za-z0-9])`, { validate: (s) => /[a-z]/.test(s) && /[A-Z]/.test(s) }),
  rule("groq-api-key", ["gsk_"], String.raw`gsk_[A-Za-z0-9]{48,64}`, { validate: mixed }),
  rule("perplexity-api-key", ["pplx-"], String.raw`pplx-[A-Za-z0-9]{40,64}`, { validate: mixed }),
  rule("replicate-api-token", ["r8_"], String.raw`r8_[A-Za-z0-9]{37,40}(?![A-Za-z0-9])`, { validate: mixed }),
  rule("xai-api-key", ["xai-"], String.raw`xai-[A-Za-z0-9]{70,128}`, { validate: mixed }),
  rule("tavily-api-key", ["tvly-"], String.raw`tvly-(?:dev-|prod-)?[A-Za-z0-9]{24,64}`, { validate: mixed }),
  rule("langsmith-api-key", ["lsv2_pt_", "lsv2_sk_"], String.raw`lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}(?![A-Za-z0-9])`),

  // Generic formats
  rule("jwt", ["eyJ"], String.raw`eyJ[A-Za-z0-9_-]{10,8192}\.eyJ[A-Za-z0-9_-]{10,16384}\.[A-Za-z0-9_-]{16,1024}`),
])

export const SCAN_RULES: readonly ScanRule[] = Object.freeze([
  // Also inside Bot API URLs, where it follows `/bot`.
  { name: "telegram-bot-token", hint: ":AA", pattern: /(?:(?<=\/bot)|(?<![A-Za-z0-9_]))\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/g },
  { name: "mailchimp-api-key", hint: "-us", pattern: /(?<![A-Za-z0-9])[0-9a-f]{32}-us\d{1,2}(?![A-Za-z0-9])/g, validate: hasDigit },
  {
    name: "azure-ad-client-secret",
    hint: "Q~",
    pattern: /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g,
    validate: mixed,
  },
  { name: "terraform-cloud-token", hint: ".atlasv1.", pattern: /(?<![A-Za-z0-9])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}(?![A-Za-z0-9_=-])/g },
  // The first part is a user id (digits) in base64, which always starts with M, N or O.
  { name: "discord-bot-token", pattern: /(?<![A-Za-z0-9_-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])/g, validate: mixed },
])
