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
/** What a base64-encoded JWT decodes to: a JSON header, a dot, a JSON payload. */
const JWT_SHAPE = /^eyJ[A-Za-z0-9_-]{8,}\.eyJ/
/** Base64 decoded to text; the length is cut to whole quanta, so a prefix of a longer value decodes too. */
const decodeBase64 = (text: string) => atob(text.slice(0, text.length - (text.length % 4)))

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
  rule("alibaba-access-key-id", ["LTAI"], String.raw`LTAI[A-Za-z0-9]{20}(?![A-Za-z0-9])`, { validate: hasDigit }),
  // Base64 of "BedrockAPIKey-" (long-lived keys) and of "bedrock.amazonaws.com" (short-lived ones).
  rule("aws-bedrock-key", ["ABSKQmVkcm9ja0FQSUtleS", "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t"], String.raw`(?:ABSKQmVkcm9ja0FQSUtleS[A-Za-z0-9+/]{91,251}={0,2}(?![A-Za-z0-9+/=])|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/%=_-]{0,4096})`),
  rule("cloudflare-origin-ca-key", ["v1.0-"], String.raw`v1\.0-[a-f0-9]{24}-[a-f0-9]{146}(?![A-Za-z0-9])`),
  rule("flyio-token", ["fo1_", "fm1a_", "fm1r_", "fm2_"], String.raw`(?:fo1_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])|fm(?:1[ar]|2)_[A-Za-z0-9+/]{100,8192}={0,3})`),
  rule("openshift-token", ["sha256~"], String.raw`sha256~[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])`, { validate: (secret) => mixed(secret.slice(7)) }),
  rule("onepassword-secret-key", ["A3-"], String.raw`A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}(?![A-Za-z0-9])`, { validate: hasDigit }),
  rule("onepassword-service-account-token", ["ops_eyJ"], String.raw`ops_eyJ[A-Za-z0-9+/=_-]{100,8192}`),

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
  rule("artifactory-token", ["AKCp", "cmVmdG"], String.raw`(?:AKCp[A-Za-z0-9]{69}|cmVmdG[A-Za-z0-9]{58})(?![A-Za-z0-9])`, { validate: hasDigit }),
  rule("harness-token", ["pat.", "sat."], String.raw`[ps]at\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}(?![A-Za-z0-9])`),
  rule("infracost-api-key", ["ico-"], String.raw`ico-[A-Za-z0-9]{32}(?![A-Za-z0-9])`, {
    // Not a file name ending in `.ico-...`.
    validate: (secret, text, at) => hasDigit(secret) && text[at - 1] !== ".",
  }),
  rule("readme-api-key", ["rdme_"], String.raw`rdme_[a-z0-9]{70}(?![A-Za-z0-9])`),
  rule("settlemint-token", ["sm_pat_", "sm_aat_", "sm_sat_"], String.raw`sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}(?![A-Za-z0-9])`, { validate: hasDigit }),
  rule("sonarqube-token", ["sqp_", "squ_", "sqa_"], String.raw`sq[pua]_[a-f0-9]{40}(?![A-Za-z0-9])`),
  rule("sourcegraph-token", ["sgp_"], String.raw`sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}(?![A-Za-z0-9])`, { validate: hasDigit }),
  rule("dockerhub-token", ["dckr_pat_", "dckr_oat_"], String.raw`dckr_(?:pat|oat)_[A-Za-z0-9_-]{24,128}`),
  rule("circleci-token", ["CCIPAT_", "CCIPRJ_"], String.raw`CCIP(?:AT|RJ)_[A-Za-z0-9]{22}_[a-f0-9]{40}(?![A-Za-z0-9])`),
  rule("sentry-token", ["sntrys_", "sntryu_"], String.raw`sntry[su]_[A-Za-z0-9+/=_-]{40,1024}`),
  rule("postman-api-key", ["PMAK-"], String.raw`PMAK-[a-f0-9]{24}-[a-f0-9]{34}(?![A-Za-z0-9])`),
  rule("doppler-token", ["dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."], String.raw`dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,256}`),
  rule("linear-api-key", ["lin_api_"], String.raw`lin_api_[A-Za-z0-9]{40}(?![A-Za-z0-9])`),
  rule("newrelic-browser-key", ["NRJS-"], String.raw`NRJS-[a-f0-9]{19}(?![A-Za-z0-9])`),
  rule("notion-token", ["ntn_"], String.raw`ntn_[A-Za-z0-9]{40,128}`, { validate: mixed }),
  rule("grafana-token", ["glsa_", "glc_"], String.raw`(?:glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}(?![A-Za-z0-9])|glc_[A-Za-z0-9+/=_-]{32,1024})`),
  rule("newrelic-api-key", ["NRAK-"], String.raw`NRAK-[A-Z0-9]{27}(?![A-Za-z0-9])`),
  rule("planetscale-token", ["pscale_tkn_", "pscale_pw_", "pscale_oauth_"], String.raw`pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,256}`),
  rule("supabase-token", ["sbp_", "sb_secret_"], String.raw`(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{20,256})(?![A-Za-z0-9])`),

  // Chat
  rule("slack-token", ["xox"], String.raw`xox(?:e\.xox[a-z]|[a-z])-[A-Za-z0-9-]{10,256}`, { validate: hasDigit }),
  rule("slack-app-token", ["xapp-"], String.raw`xapp-\d-[A-Za-z0-9-]{20,256}`),
  rule("slack-webhook", ["hooks.slack.com/"], String.raw`hooks\.slack\.com\/(?:services|workflows|triggers)\/([A-Za-z0-9_/+-]{20,256})`, { group: 1 }),
  // `<tenant>.webhook.office.com/webhookb2/<group>@<tenant>/IncomingWebhook/<id>/<owner>`, and the older outlook.office.com form.
  rule("teams-webhook", ["webhook.office.com/", "outlook.office.com/webhook"], String.raw`(?:webhook\.office\.com\/webhookb2|outlook\.office\.com\/webhook(?:b2)?)\/([A-Za-z0-9@/_-]{40,400})`, { group: 1 }),
  rule(
    "discord-webhook",
    ["https://discord", "https://ptb.discord", "https://canary.discord"],
    String.raw`https:\/\/(?:(?:ptb|canary)\.)?discord(?:app)?\.com\/api(?:\/v\d+)?\/webhooks\/\d+\/([A-Za-z0-9_-]{60,128})`,
    { group: 1 },
  ),

  // Payments, mail, commerce
  rule("easypost-api-key", ["EZAK", "EZTK"], String.raw`EZ[AT]K[A-Za-z0-9]{54}(?![A-Za-z0-9])`, { validate: mixed }),
  rule("facebook-access-token", ["EAA"], String.raw`EAA[B-Z][A-Za-z0-9]{100,1024}(?![A-Za-z0-9])`, { validate: mixed }),
  rule("plaid-access-token", ["access-sandbox-", "access-development-", "access-production-"], String.raw`access-(?:sandbox|development|production)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}(?![A-Za-z0-9])`),
  rule("stripe-secret-key", ["sk_live_", "sk_test_", "sk_prod_"], String.raw`sk_(?:live|test|prod)_[A-Za-z0-9]{20,256}`),
  rule("stripe-restricted-key", ["rk_live_", "rk_test_", "rk_prod_"], String.raw`rk_(?:live|test|prod)_[A-Za-z0-9]{20,256}`),
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
  // The legacy form, as Codex's own rule takes it: 20+ letters and digits in any mix of cases
  // (`sk-abcdefghijklmnopqrstuvwxyz123456`). Tried after the rule above, which takes a longer key
  // with `-` or `_` in it whole.
  rule("openai-api-key", ["sk-"], String.raw`sk-[A-Za-z0-9]{20,512}(?![A-Za-z0-9])`),
  rule("huggingface-token", ["hf_", "api_org_"], String.raw`(?:hf_|api_org_)[A-Za-z0-9]{30,64}(?![A-Za-z0-9])`, { validate: (s) => /[a-z]/.test(s) && /[A-Z]/.test(s) }),
  rule("groq-api-key", ["gsk_"], String.raw`gsk_[A-Za-z0-9]{48,64}`, { validate: mixed }),
  rule("perplexity-api-key", ["pplx-"], String.raw`pplx-[A-Za-z0-9]{40,64}`, { validate: mixed }),
  rule("replicate-api-token", ["r8_"], String.raw`r8_[A-Za-z0-9]{37,40}(?![A-Za-z0-9])`, { validate: mixed }),
  rule("xai-api-key", ["xai-"], String.raw`xai-[A-Za-z0-9]{70,128}`, { validate: mixed }),
  rule("tavily-api-key", ["tvly-"], String.raw`tvly-(?:dev-|prod-)?[A-Za-z0-9]{24,64}`, { validate: mixed }),
  rule("langsmith-api-key", ["lsv2_pt_", "lsv2_sk_"], String.raw`lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}(?![A-Za-z0-9])`),

  // Other services
  rule("adobe-client-secret", ["p8e-"], String.raw`p8e-[A-Za-z0-9]{32}(?![A-Za-z0-9])`, { validate: hasDigit }),
  rule("intra42-client-secret", ["s-s4t2ud-", "s-s4t2af-"], String.raw`s-s4t2(?:ud|af)-[a-f0-9]{64}(?![A-Za-z0-9])`),
  // App-only bearer tokens open with 22 A's: the run is the format, not a placeholder (checked on the rest).
  rule("twitter-bearer-token", ["AAAAAAAAAAAAAAAAAAAAA"], String.raw`A{22}[A-Za-z0-9%]{80,120}(?![A-Za-z0-9%])`, { validate: mixed }),

  // Generic formats
  // Also unsigned (`alg: none`), where nothing follows the second dot.
  rule("jwt", ["eyJ"], String.raw`eyJ[A-Za-z0-9_-]{10,8192}\.eyJ[A-Za-z0-9_-]{10,16384}\.(?:[A-Za-z0-9_-]{16,1024}|(?![A-Za-z0-9_.-]))`),
  // A JWT encoded once more in base64 (Kubernetes secrets, config blobs): `eyJ` becomes `ZXlK`.
  rule("jwt", ["ZXlK"], String.raw`ZXlK[A-Za-z0-9+/]{40,16384}={0,2}`, { validate: (secret) => JWT_SHAPE.test(decodeBase64(secret.slice(0, 400))) }),
])

export const SCAN_RULES: readonly ScanRule[] = Object.freeze([
  // An app access token: the app id, a bar (or its escape), the app secret.
  {
    name: "facebook-access-token",
    hint: "|",
    pattern: /(?<![A-Za-z0-9_|])\d{15,16}\|[A-Za-z0-9_-]{27}(?![A-Za-z0-9_-])/g,
    validate: (secret) => mixed(secret.slice(secret.indexOf("|") + 1)),
  },
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
