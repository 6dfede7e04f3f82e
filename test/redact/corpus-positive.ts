// True positives: text as it shows up in sessions (commands, config files, logs, code), each with
// the secrets that must disappear and exactly the classes redact() must count. Every class the
// rules define has at least one case here (checked by redact-corpus.test.ts).
import { ALNUM, BASE64, DIGITS, HEX, LOWER, UPPER, URLSAFE, fake } from "./fakes.js"

export interface Positive {
  about: string
  text: string
  /** Substrings that must not survive redaction. */
  secrets: string[]
  /** Exactly what redact() must count. */
  counts: Record<string, number>
  /** Parsed before and after redaction: both must parse, and only secret leaves may change. */
  format?: "json" | "yaml"
}

const f = fake
const hex = (label: string, n: number) => f(label, HEX, n)
const alnum = (label: string, n: number) => f(label, ALNUM, n)

const AWS_ID = `AKIA${f("aws-id", UPPER + DIGITS, 16)}`
const AWS_SECRET = f("aws-secret", BASE64, 40)
const AWS_SESSION = `IQoJb3JpZ2luX2VjE${f("aws-session", BASE64, 280)}`
const GOOGLE_KEY = `AIza${f("google-key", URLSAFE, 35)}`
const GOOGLE_SECRET = `GOCSPX-${f("google-secret", URLSAFE, 28)}`
const GOOGLE_TOKEN = `ya29.a0${f("google-token", URLSAFE, 150)}`
const PEM_BODY = [f("pem-1", BASE64, 64), f("pem-2", BASE64, 64), f("pem-3", BASE64, 40)]
const AZURE_KEY = `${f("azure-key", BASE64, 86)}==`
const AZURE_SAK = `${f("azure-sak", BASE64, 43)}=`
const AZURE_SIG = `${f("azure-sig", ALNUM, 40)}%2B${f("azure-sig2", ALNUM, 8)}%3D`
const AZURE_AD = `${f("azure-ad-a", ALNUM, 3)}8Q~${f("azure-ad-b", ALNUM + "_-", 34)}`
const DO_TOKEN = `dop_v1_${hex("do", 64)}`
const HEROKU_NEW = `HRKU-AA${f("heroku", URLSAFE, 58)}`
const HEROKU_UUID = `${hex("hu1", 8)}-${hex("hu2", 4)}-4${hex("hu3", 3)}-a${hex("hu4", 3)}-${hex("hu5", 12)}`
const VAULT = `hvs.CAESI${f("vault", URLSAFE, 90)}`
const DATABRICKS = `dapi${hex("databricks", 32)}`
const AGE = `AGE-SECRET-KEY-1${f("age", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)}`
const TFC = `${alnum("tfc-a", 14)}.atlasv1.${alnum("tfc-b", 67)}`
const GH_CLASSIC = `ghs_${alnum("ghs", 36)}`
const GH_PAT = `ghp_${alnum("ghp", 36)}`
const GH_FINE = `github_pat_11${f("ghf-a", UPPER + DIGITS, 20)}_${alnum("ghf-b", 59)}`
const GITLAB = `glpat-${f("glpat", URLSAFE, 20)}`
const GITLAB_RUNNER = `glrt-${f("glrt", URLSAFE, 20)}`
const GITLAB_JOB = `glcbt-64_${f("glcbt", URLSAFE, 20)}`
const BITBUCKET = `ATBB${alnum("atbb", 32)}`
const ATLASSIAN = `ATATT3xFfGF0${f("atatt", URLSAFE, 170)}=${hex("atatt-end", 8).toUpperCase()}`
const NPM = `npm_${alnum("npm", 36)}`
const PYPI = `pypi-AgEIcHlwaS5vcmc${f("pypi", URLSAFE, 120)}`
const RUBYGEMS = `rubygems_${hex("rubygems", 48)}`
const NUGET = `oy2${f("nuget", LOWER + DIGITS, 43)}`
const DOCKER = `dckr_pat_${f("docker", URLSAFE, 27)}`
const CIRCLE = `CCIPAT_${alnum("circle-a", 22)}_${hex("circle-b", 40)}`
const CIRCLE_LEGACY = hex("circle-legacy", 40)
const TRAVIS = alnum("travis", 22)
const SENTRY = `sntrys_eyJpYXQiOjE3MDAwMDAwMDAuMCwidXJsIjoiaHR0cHM6Ly9zZW50cnkuaW8ifQ_${f("sentry", URLSAFE, 43)}`
const POSTMAN = `PMAK-${hex("pmak-a", 24)}-${hex("pmak-b", 34)}`
const DOPPLER = `dp.st.prd.${alnum("doppler", 43)}`
const LINEAR = `lin_api_${alnum("linear", 40)}`
const NOTION = `ntn_${alnum("notion", 46)}`
const GRAFANA = `glsa_${alnum("grafana-a", 32)}_${hex("grafana-b", 8)}`
const NEWRELIC = `NRAK-${f("newrelic", UPPER + DIGITS, 27)}`
const PLANETSCALE = `pscale_tkn_${f("pscale", URLSAFE, 43)}`
const SUPABASE = `sbp_${hex("supabase", 40)}`
const SLACK = `xoxb-${f("slack-a", DIGITS, 12)}-${f("slack-b", DIGITS, 13)}-${alnum("slack-c", 24)}`
const SLACK_APP = `xapp-1-A${f("slack-app-a", UPPER + DIGITS, 10)}-${f("slack-app-b", DIGITS, 13)}-${hex("slack-app-c", 64)}`
const SLACK_HOOK = `T${f("hook-a", UPPER + DIGITS, 8)}/B${f("hook-b", UPPER + DIGITS, 10)}/${alnum("hook-c", 24)}`
const DISCORD_BOT = `MT${alnum("discord-a", 24)}.${f("discord-b", URLSAFE, 6)}.${f("discord-c", URLSAFE, 38)}`
const DISCORD_HOOK = f("discord-hook", URLSAFE, 68)
const TELEGRAM = `${f("telegram-a", DIGITS, 10)}:AA${f("telegram-b", URLSAFE, 33)}`
const TWILIO_KEY = `SK${hex("twilio-key", 32)}`
const TWILIO_TOKEN = hex("twilio-token", 32)
const SENDGRID = `SG.${f("sendgrid-a", URLSAFE, 22)}.${f("sendgrid-b", URLSAFE, 43)}`
const MAILGUN = `key-${hex("mailgun", 32)}`
const MAILCHIMP = `${hex("mailchimp", 32)}-us21`
const STRIPE = `sk_live_51${alnum("stripe", 96)}`
const STRIPE_RK = `rk_live_51${alnum("stripe-rk", 96)}`
const STRIPE_WH = `whsec_${alnum("stripe-wh", 32)}`
const SQUARE = `EAAA${f("square", URLSAFE, 60)}`
const SQUARE_SECRET = `sq0csp-${f("square-secret", URLSAFE, 43)}`
const BRAINTREE = `access_token$production$${f("braintree-a", LOWER + DIGITS, 16)}$${hex("braintree-b", 32)}`
const PAYPAL = f("paypal", URLSAFE, 80)
const SHOPIFY = `shpat_${hex("shopify", 32)}`
const SHOPIFY_SS = `shpss_${hex("shopify-ss", 32)}`
const OPENAI = `sk-proj-${f("openai", URLSAFE, 156)}`
const OPENAI_LEGACY = `sk-${alnum("openai-legacy", 48)}`
const ANTHROPIC = `sk-ant-api03-${f("anthropic", URLSAFE, 93)}AA`
const HF = `hf_${f("hf", UPPER + LOWER, 34)}`
const GROQ = `gsk_${alnum("groq", 52)}`
const PPLX = `pplx-${alnum("pplx", 48)}`
const REPLICATE = `r8_${alnum("replicate", 37)}`
const XAI = `xai-${alnum("xai", 80)}`
const DEEPSEEK = `sk-${hex("deepseek", 32)}`
const OPENROUTER = `sk-or-v1-${hex("openrouter", 64)}`
const TAVILY = `tvly-dev-${alnum("tavily", 32)}`
const LANGSMITH = `lsv2_pt_${hex("langsmith-a", 32)}_${hex("langsmith-b", 10)}`
const COHERE = alnum("cohere", 40)
const MISTRAL = alnum("mistral", 32)
const DATADOG = hex("datadog", 32)
const JWT = `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUifQ.${f("jwt", URLSAFE, 43)}`
const BEARER = alnum("bearer", 40)
const BASIC = `${f("basic", BASE64, 30)}==`
const OPAQUE = f("opaque", URLSAFE, 32)
const SESSION_COOKIE = alnum("cookie", 32)

const PASSWORD = `Tr0ub4dor-${alnum("pw", 8)}`
/** A password as people write them: letters, a symbol, digits. */
const pw = (label: string) => `${alnum(label, 10)}#${f(`${label}-d`, DIGITS, 3)}`
/** The same for URLs, where `#` would start the fragment. */
const upw = (label: string) => `${alnum(label, 10)}-${f(`${label}-d`, DIGITS, 3)}`


// Services added for issue 10: made-up values in each format.
const ALIBABA = `LTAI${alnum("alibaba", 20)}`
const BEDROCK = `ABSKQmVkcm9ja0FQSUtleS1${f("bedrock", BASE64, 108)}=`
const CF_ORIGIN = `v1.0-${hex("cf-origin-a", 24)}-${hex("cf-origin-b", 146)}`
const FLY = `fm2_lJPE${f("fly", BASE64, 180)}==`
const FLY_ORG = `fo1_${f("fly-org", URLSAFE, 43)}`
const OPENSHIFT = `sha256~${f("openshift", URLSAFE, 43)}`
const OP_SECRET = `A3-${f("op-a", UPPER + DIGITS, 6)}-${f("op-b", UPPER + DIGITS, 6)}-${f("op-c", UPPER + DIGITS, 5)}-${f("op-d", UPPER + DIGITS, 5)}-${f("op-e", UPPER + DIGITS, 5)}-${f("op-f", UPPER + DIGITS, 5)}`
const OP_SERVICE = `ops_eyJzaWduSW5BZGRyZXNzIjoibXkuMXBhc3N3b3JkLmNvbSIs${f("op-service", URLSAFE, 240)}`
const ARTIFACTORY = `AKCp${alnum("artifactory", 69)}`
const HARNESS = `pat.${f("harness-a", URLSAFE, 22)}.${alnum("harness-b", 24)}.${alnum("harness-c", 20)}`
const INFRACOST = `ico-${alnum("infracost", 32)}`
const README = `rdme_${f("readme", LOWER + DIGITS, 70)}`
const SETTLEMINT = `sm_pat_${alnum("settlemint", 16)}`
const SONAR = `sqp_${hex("sonar", 40)}`
const SOURCEGRAPH = `sgp_${hex("sg-a", 16)}_${hex("sg-b", 40)}`
const NR_BROWSER = `NRJS-${hex("nrjs", 19)}`
const TEAMS = `${hex("teams-a", 8)}-${hex("teams-b", 4)}-4${hex("teams-c", 3)}-a${hex("teams-d", 3)}-${hex("teams-e", 12)}@${hex("teams-f", 8)}-${hex("teams-g", 4)}-4${hex("teams-h", 3)}-a${hex("teams-i", 3)}-${hex("teams-j", 12)}/IncomingWebhook/${hex("teams-k", 32)}/${hex("teams-l", 8)}-${hex("teams-m", 4)}-4${hex("teams-n", 3)}-a${hex("teams-o", 3)}-${hex("teams-p", 12)}`
const EASYPOST = `EZAK${alnum("easypost", 54)}`
const FB_PAGE = `EAAG${alnum("fb-page", 160)}`
const FB_APP = `${f("fb-app-id", DIGITS, 15)}|${alnum("fb-app-secret", 27)}`
const PLAID = `access-sandbox-${hex("plaid-a", 8)}-${hex("plaid-b", 4)}-${hex("plaid-c", 4)}-${hex("plaid-d", 4)}-${hex("plaid-e", 12)}`
const ADOBE = `p8e-${alnum("adobe", 32)}`
const INTRA42 = `s-s4t2ud-${hex("intra42", 64)}`
const TWITTER_BEARER = `${"A".repeat(22)}${alnum("twitter", 90)}`
const JWT_UNSIGNED = `eyJhbGciOiJub25lIn0.eyJzdWIiOiJ${f("jwt-none", URLSAFE, 30)}fQ.`
const JWT_BASE64 = btoa(JWT).replace(/=+$/, "")

/** Passwords as people paste them into URLs, without percent-encoding. */
const RAW_PW = `${alnum("raw-a", 6)}#${alnum("raw-b", 4)}%!*&@${alnum("raw-c", 5)}`
const SLASHED_PW = `${alnum("slash-a", 6)}/${alnum("slash-b", 3)}? ${alnum("slash-c", 7)}`
const LOWER_PW = `${f("lower-a", LOWER, 7)} ${f("lower-b", LOWER, 6)}`
const WORDS_PW = f("words-pw", LOWER, 9)
const PGPASS_ESCAPED = `${alnum("pgpass-2a", 8)}\\:${alnum("pgpass-2b", 8)}`
const CURL_ID = `{${hex("curl-uuid-a", 8)}-${hex("curl-uuid-b", 4)}-4${hex("curl-uuid-c", 3)}-a${hex("curl-uuid-d", 3)}-${hex("curl-uuid-e", 12)}}`

export const POSITIVES: readonly Positive[] = [
  // ---- Cloud providers
  { about: "an AWS access key id in a credentials file", text: `[default]\naws_access_key_id = ${AWS_ID}\nregion = eu-west-1\n`, secrets: [AWS_ID], counts: { "aws-access-key": 1 } },
  { about: "an AWS secret access key exported in a shell", text: `export AWS_SECRET_ACCESS_KEY=${AWS_SECRET}\naws s3 ls\n`, secrets: [AWS_SECRET], counts: { "aws-secret-access-key": 1 } },
  { about: "an AWS secret access key in a credentials file", text: `[prod]\naws_secret_access_key = ${AWS_SECRET}\n`, secrets: [AWS_SECRET], counts: { "aws-secret-access-key": 1 } },
  {
    about: "an AWS session token in STS JSON output",
    text: `{\n  "Credentials": {\n    "AccessKeyId": "ASIA${f("asia", UPPER + DIGITS, 16)}",\n    "SessionToken": "${AWS_SESSION}",\n    "Expiration": "2026-03-01T12:00:00Z"\n  }\n}\n`,
    secrets: [AWS_SESSION, `ASIA${f("asia", UPPER + DIGITS, 16)}`],
    counts: { "aws-access-key": 1, "aws-session-token": 1 },
    format: "json",
  },
  { about: "a Google API key for Gemini", text: `GEMINI_API_KEY=${GOOGLE_KEY} python chat.py`, secrets: [GOOGLE_KEY], counts: { "google-api-key": 1 } },
  { about: "a Google OAuth client secret", text: `{"installed":{"client_id":"1234-abc.apps.googleusercontent.com","client_secret":"${GOOGLE_SECRET}"}}`, secrets: [GOOGLE_SECRET], counts: { "google-oauth-client-secret": 1 }, format: "json" },
  { about: "a Google OAuth access token in a curl call", text: `curl -H "Authorization: Bearer ${GOOGLE_TOKEN}" https://www.googleapis.com/drive/v3/files`, secrets: [GOOGLE_TOKEN], counts: { "google-oauth-token": 1 } },
  {
    about: "a GCP service-account key file",
    text: `{\n  "type": "service_account",\n  "project_id": "acme-prod",\n  "private_key_id": "${hex("sa-kid", 40)}",\n  "private_key": "-----BEGIN PRIVATE KEY-----\\n${PEM_BODY.join("\\n")}\\n-----END PRIVATE KEY-----\\n",\n  "client_email": "deployer@acme-prod.iam.gserviceaccount.com"\n}\n`,
    secrets: PEM_BODY,
    counts: { "gcp-service-account-key": 1 },
    format: "json",
  },
  {
    about: "an Azure storage connection string",
    text: `AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=acmedata;AccountKey=${AZURE_KEY};EndpointSuffix=core.windows.net"`,
    secrets: [AZURE_KEY],
    counts: { "azure-storage-key": 1 },
  },
  {
    about: "an Azure Service Bus connection string",
    text: `"ServiceBus": "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=${AZURE_SAK}"`,
    secrets: [AZURE_SAK],
    counts: { "azure-shared-access-key": 1 },
  },
  {
    about: "an Azure SAS URL",
    text: `az storage blob download --blob-url "https://acme.blob.core.windows.net/backups/db.tar?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-04-01T00:00:00Z&spr=https&sig=${AZURE_SIG}"`,
    secrets: [AZURE_SIG],
    counts: { "azure-sas-token": 1 },
  },
  { about: "an Azure AD client secret", text: `AZURE_CLIENT_ID=6f1c2d3e-0000-4000-8000-123456789abc\nAZURE_CLIENT_SECRET=${AZURE_AD}\n`, secrets: [AZURE_AD], counts: { "azure-ad-client-secret": 1 } },
  { about: "a DigitalOcean token on a command line", text: `doctl auth init --access-token ${DO_TOKEN}`, secrets: [DO_TOKEN], counts: { "digitalocean-token": 1 } },
  { about: "a Heroku API key in the new format", text: `heroku authorizations:create -> Token: ${HEROKU_NEW}`, secrets: [HEROKU_NEW], counts: { "heroku-api-key": 1 } },
  { about: "a Heroku API key in the UUID format", text: `HEROKU_API_KEY=${HEROKU_UUID}\n`, secrets: [HEROKU_UUID], counts: { "heroku-api-key": 1 } },
  { about: "a HashiCorp Vault token", text: `$ vault login\nToken (will be hidden):\nSuccess! token ${VAULT} is now stored`, secrets: [VAULT], counts: { "hashicorp-vault-token": 1 } },
  { about: "a Databricks token", text: `databricks configure --host https://acme.cloud.databricks.com --token ${DATABRICKS}`, secrets: [DATABRICKS], counts: { "databricks-token": 1 } },
  { about: "an age secret key", text: `# created: 2026-01-01T00:00:00Z\n# public key: age1${f("age-pub", "qpzry9x8gf2tvdw0s3jn54khce6mua7l", 58)}\n${AGE}\n`, secrets: [AGE], counts: { "age-secret-key": 1 } },
  { about: "a Terraform Cloud token", text: `credentials "app.terraform.io" {\n  token = "${TFC}"\n}\n`, secrets: [TFC], counts: { "terraform-cloud-token": 1 } },

  // ---- Source hosting, registries, CI
  { about: "a GitHub installation token in a clone URL", text: `git clone https://x-access-token:${GH_CLASSIC}@github.com/acme/app.git`, secrets: [GH_CLASSIC], counts: { "github-token": 1 } },
  { about: "a GitHub personal access token in prose", text: `I set my token to ${GH_PAT} but the push still fails.`, secrets: [GH_PAT], counts: { "github-token": 1 } },
  { about: "a fine-grained GitHub token", text: `gh auth login --with-token <<< ${GH_FINE}`, secrets: [GH_FINE], counts: { "github-fine-grained-token": 1 } },
  { about: "a GitLab personal access token in a header", text: `PRIVATE-TOKEN: ${GITLAB}`, secrets: [GITLAB], counts: { "gitlab-token": 1 } },
  { about: "a GitLab runner token", text: `[[runners]]\n  name = "build-01"\n  url = "https://gitlab.com"\n  token = "${GITLAB_RUNNER}"\n`, secrets: [GITLAB_RUNNER], counts: { "gitlab-runner-token": 1 } },
  { about: "a GitLab CI job token", text: `curl --header "JOB-TOKEN: ${GITLAB_JOB}" "$CI_API_V4_URL/projects/42/packages"`, secrets: [GITLAB_JOB], counts: { "gitlab-ci-job-token": 1 } },
  { about: "a Bitbucket app password", text: `git remote set-url origin https://dev:${BITBUCKET}@bitbucket.org/acme/app.git`, secrets: [BITBUCKET], counts: { "bitbucket-token": 1 } },
  { about: "an Atlassian API token", text: `JIRA_API_TOKEN=${ATLASSIAN}`, secrets: [ATLASSIAN], counts: { "atlassian-api-token": 1 } },
  { about: "an npm token in .npmrc", text: `//registry.npmjs.org/:_authToken=${NPM}\n`, secrets: [NPM], counts: { "npm-token": 1 } },
  { about: "a PyPI token in .pypirc", text: `[pypi]\n  username = __token__\n  password = ${PYPI}\n`, secrets: [PYPI], counts: { "pypi-token": 1 } },
  { about: "a RubyGems API key", text: `---\n:rubygems_api_key: ${RUBYGEMS}\n`, secrets: [RUBYGEMS], counts: { "rubygems-api-key": 1 } },
  { about: "a NuGet API key", text: `dotnet nuget push bin/Acme.1.0.0.nupkg --api-key ${NUGET} --source https://api.nuget.org/v3/index.json`, secrets: [NUGET], counts: { "nuget-api-key": 1 } },
  { about: "a Docker Hub token piped to docker login", text: `echo ${DOCKER} | docker login -u acme --password-stdin`, secrets: [DOCKER], counts: { "dockerhub-token": 1 } },
  { about: "a CircleCI personal token", text: `curl -H "Circle-Token: ${CIRCLE}" https://circleci.com/api/v2/me`, secrets: [CIRCLE], counts: { "circleci-token": 1 } },
  { about: "a CircleCI legacy token", text: `CIRCLE_TOKEN=${CIRCLE_LEGACY}`, secrets: [CIRCLE_LEGACY], counts: { "circleci-token": 1 } },
  { about: "a Travis CI token", text: `export TRAVIS_API_TOKEN=${TRAVIS}`, secrets: [TRAVIS], counts: { "travis-token": 1 } },
  { about: "a Sentry auth token", text: `SENTRY_AUTH_TOKEN=${SENTRY} sentry-cli releases new 1.2.3`, secrets: [SENTRY], counts: { "sentry-token": 1 } },
  { about: "a Postman API key", text: `postman login --with-api-key ${POSTMAN}`, secrets: [POSTMAN], counts: { "postman-api-key": 1 } },
  { about: "a Doppler service token", text: `doppler run --token ${DOPPLER} -- npm start`, secrets: [DOPPLER], counts: { "doppler-token": 1 } },
  { about: "a Linear API key", text: `const linear = new LinearClient({ apiKey: "${LINEAR}" })`, secrets: [LINEAR], counts: { "linear-api-key": 1 } },
  { about: "a Notion integration token", text: `NOTION_TOKEN=${NOTION}`, secrets: [NOTION], counts: { "notion-token": 1 } },
  { about: "a Grafana service-account token", text: `grafana_auth = "${GRAFANA}"`, secrets: [GRAFANA], counts: { "grafana-token": 1 } },
  { about: "a New Relic user key", text: `NEW_RELIC_API_KEY=${NEWRELIC}`, secrets: [NEWRELIC], counts: { "newrelic-api-key": 1 } },
  { about: "a PlanetScale service token", text: `pscale connect app main --service-token ${PLANETSCALE}`, secrets: [PLANETSCALE], counts: { "planetscale-token": 1 } },
  { about: "a Supabase access token", text: `SUPABASE_ACCESS_TOKEN=${SUPABASE} supabase link`, secrets: [SUPABASE], counts: { "supabase-token": 1 } },

  // ---- Chat
  { about: "a Slack bot token", text: `client = WebClient(token="${SLACK}")`, secrets: [SLACK], counts: { "slack-token": 1 } },
  { about: "a Slack app-level token", text: `SLACK_APP_TOKEN=${SLACK_APP}`, secrets: [SLACK_APP], counts: { "slack-app-token": 1 } },
  { about: "a Slack incoming webhook", text: `curl -X POST -d '{"text":"deployed"}' https://hooks.slack.com/services/${SLACK_HOOK}`, secrets: [SLACK_HOOK], counts: { "slack-webhook": 1 } },
  { about: "a Discord bot token", text: `client.run("${DISCORD_BOT}")`, secrets: [DISCORD_BOT], counts: { "discord-bot-token": 1 } },
  { about: "a Discord webhook", text: `webhook_url: https://discord.com/api/webhooks/1187265498765432109/${DISCORD_HOOK}`, secrets: [DISCORD_HOOK], counts: { "discord-webhook": 1 } },
  { about: "a Telegram bot token in an API URL", text: `curl "https://api.telegram.org/bot${TELEGRAM}/sendMessage?chat_id=42&text=hi"`, secrets: [TELEGRAM], counts: { "telegram-bot-token": 1 } },

  // ---- Payments, mail, commerce
  { about: "a Twilio API key", text: `client = Client("${TWILIO_KEY}", api_secret, account_sid)`, secrets: [TWILIO_KEY], counts: { "twilio-api-key": 1 } },
  { about: "a Twilio auth token", text: `TWILIO_ACCOUNT_SID=AC${hex("twilio-sid", 32)}\nTWILIO_AUTH_TOKEN=${TWILIO_TOKEN}\n`, secrets: [TWILIO_TOKEN], counts: { "twilio-auth-token": 1 } },
  { about: "a SendGrid API key", text: `sg = SendGridAPIClient("${SENDGRID}")`, secrets: [SENDGRID], counts: { "sendgrid-api-key": 1 } },
  { about: "a Mailgun API key", text: `curl -s --user 'api:${MAILGUN}' https://api.mailgun.net/v3/mg.acme.dev/messages`, secrets: [MAILGUN], counts: { "mailgun-api-key": 1 } },
  { about: "a Mailchimp API key", text: `mailchimp.setConfig({ apiKey: "${MAILCHIMP}", server: "us21" })`, secrets: [MAILCHIMP], counts: { "mailchimp-api-key": 1 } },
  { about: "a Stripe secret key", text: `stripe.api_key = "${STRIPE}"`, secrets: [STRIPE], counts: { "stripe-secret-key": 1 } },
  { about: "a Stripe restricted key", text: `STRIPE_KEY=${STRIPE_RK}`, secrets: [STRIPE_RK], counts: { "stripe-restricted-key": 1 } },
  { about: "a Stripe webhook signing secret", text: `> Ready! Your webhook signing secret is ${STRIPE_WH} (^C to quit)`, secrets: [STRIPE_WH], counts: { "stripe-webhook-secret": 1 } },
  { about: "a Square access token", text: `SQUARE_ACCESS_TOKEN: ${SQUARE}`, secrets: [SQUARE], counts: { "square-access-token": 1 } },
  { about: "a Square OAuth application secret", text: `"application_secret": "${SQUARE_SECRET}"`, secrets: [SQUARE_SECRET], counts: { "square-oauth-secret": 1 } },
  { about: "a Braintree access token", text: `gateway = braintree.BraintreeGateway(access_token="${BRAINTREE}")`, secrets: [BRAINTREE], counts: { "braintree-access-token": 1 } },
  { about: "a PayPal client secret", text: `PAYPAL_CLIENT_ID=Ab${alnum("paypal-id", 78)}\nPAYPAL_CLIENT_SECRET=${PAYPAL}\n`, secrets: [PAYPAL], counts: { "paypal-client-secret": 1 } },
  { about: "a Shopify admin token", text: `X-Shopify-Access-Token: ${SHOPIFY}`, secrets: [SHOPIFY], counts: { "shopify-access-token": 1 } },
  { about: "a Shopify app shared secret", text: `SHOPIFY_API_SECRET=${SHOPIFY_SS}`, secrets: [SHOPIFY_SS], counts: { "shopify-shared-secret": 1 } },

  // ---- Model providers
  { about: "an OpenAI project key", text: `OPENAI_API_KEY=${OPENAI}`, secrets: [OPENAI], counts: { "openai-api-key": 1 } },
  { about: "a legacy OpenAI key in Python", text: `openai.api_key = '${OPENAI_LEGACY}'`, secrets: [OPENAI_LEGACY], counts: { "openai-api-key": 1 } },
  { about: "an Anthropic key in a request header", text: `curl https://api.anthropic.com/v1/messages -H "x-api-key: ${ANTHROPIC}" -H "anthropic-version: 2023-06-01"`, secrets: [ANTHROPIC], counts: { "anthropic-api-key": 1 } },
  { about: "a Hugging Face token", text: `huggingface-cli login --token ${HF}`, secrets: [HF], counts: { "huggingface-token": 1 } },
  { about: "a Groq key", text: `client = Groq(api_key="${GROQ}")`, secrets: [GROQ], counts: { "groq-api-key": 1 } },
  { about: "a Perplexity key", text: `PPLX_API_KEY=${PPLX}`, secrets: [PPLX], counts: { "perplexity-api-key": 1 } },
  { about: "a Replicate token", text: `export REPLICATE_API_TOKEN=${REPLICATE}`, secrets: [REPLICATE], counts: { "replicate-api-token": 1 } },
  { about: "an xAI key", text: `XAI_API_KEY: ${XAI}`, secrets: [XAI], counts: { "xai-api-key": 1 } },
  { about: "a DeepSeek key", text: `client = OpenAI(api_key="${DEEPSEEK}", base_url="https://api.deepseek.com")`, secrets: [DEEPSEEK], counts: { "deepseek-api-key": 1 } },
  { about: "an OpenRouter key", text: `OPENROUTER_API_KEY=${OPENROUTER}`, secrets: [OPENROUTER], counts: { "openrouter-api-key": 1 } },
  { about: "a Tavily key", text: `tavily = TavilyClient(api_key="${TAVILY}")`, secrets: [TAVILY], counts: { "tavily-api-key": 1 } },
  { about: "a LangSmith key", text: `LANGSMITH_API_KEY=${LANGSMITH}`, secrets: [LANGSMITH], counts: { "langsmith-api-key": 1 } },
  { about: "a Cohere key", text: `COHERE_API_KEY=${COHERE}`, secrets: [COHERE], counts: { "cohere-api-key": 1 } },
  { about: "a Mistral key", text: `export MISTRAL_API_KEY=${MISTRAL}`, secrets: [MISTRAL], counts: { "mistral-api-key": 1 } },
  { about: "a Datadog API key", text: `DD_API_KEY=${DATADOG} DD_SITE=datadoghq.eu ./install.sh`, secrets: [DATADOG], counts: { "datadog-api-key": 1 } },

  // ---- Generic formats
  { about: "a JWT in a log line", text: `2026-03-01T10:00:00Z DEBUG session restored from ${JWT} for user 42`, secrets: [JWT.split(".")[2]!], counts: { jwt: 1 } },
  {
    about: "an RSA private key block",
    text: `$ cat deploy_key\n-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY.join("\n")}\n-----END RSA PRIVATE KEY-----\n$ ls\n`,
    secrets: PEM_BODY,
    counts: { "private-key": 1 },
  },
  {
    about: "an OpenSSH private key",
    text: `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n${PEM_BODY[0]}\n-----END OPENSSH PRIVATE KEY-----`,
    secrets: [PEM_BODY[0]!, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"],
    counts: { "private-key": 1 },
  },
  {
    about: "a PGP private key block",
    text: `-----BEGIN PGP PRIVATE KEY BLOCK-----\nComment: acme release key\n\n${PEM_BODY.join("\n")}\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----`,
    secrets: PEM_BODY,
    counts: { "private-key": 1 },
  },
  {
    about: "an EC private key cut before its end line",
    text: `-----BEGIN EC PRIVATE KEY-----\n${PEM_BODY[1]}\n${PEM_BODY[2]}\n[... 812 characters cut ...]\ntail of the output`,
    secrets: [PEM_BODY[1]!, PEM_BODY[2]!],
    counts: { "private-key": 1 },
  },
  {
    about: "a private key in a YAML block scalar",
    text: `tls:\n  key: |\n    -----BEGIN PRIVATE KEY-----\n    ${PEM_BODY[0]}\n    ${PEM_BODY[1]}\n    -----END PRIVATE KEY-----\n  cert: cert.pem\n`,
    secrets: [PEM_BODY[0]!, PEM_BODY[1]!],
    counts: { "private-key": 1 },
    format: "yaml",
  },
  { about: "a Postgres URL with a password", text: `DATABASE_URL=postgres://app:${upw("pg")}@db.internal:5432/app?sslmode=require`, secrets: [upw("pg")], counts: { "database-url": 1 } },
  { about: "a MongoDB SRV URL", text: `const client = new MongoClient("mongodb+srv://admin:${upw("mongo")}@cluster0.ab1cd.mongodb.net/?retryWrites=true")`, secrets: [upw("mongo")], counts: { "database-url": 1 } },
  { about: "a Redis URL with an empty user", text: `REDIS_URL=redis://:${upw("redis")}@cache:6379/0`, secrets: [upw("redis")], counts: { "database-url": 1 } },
  { about: "a MySQL URL in YAML", text: `datasource:\n  url: mysql://root:${upw("mysql")}@localhost:3306/shop\n`, secrets: [upw("mysql")], counts: { "database-url": 1 }, format: "yaml" },
  { about: "an AMQP URL", text: `amqp://worker:${upw("amqp")}@rabbit.internal:5672/%2f`, secrets: [upw("amqp")], counts: { "database-url": 1 } },
  { about: "a JDBC URL with a password containing @", text: `jdbc:postgresql://etl:p@ss${f("jdbc", DIGITS, 4)}word@warehouse:5432/dw`, secrets: [`p@ss${f("jdbc", DIGITS, 4)}word`], counts: { "database-url": 1 } },
  {
    about: "a Postgres URL whose password was not percent-encoded",
    text: `DATABASE_URL=postgresql://app:${RAW_PW}@db.internal:5432/app?sslmode=require`,
    secrets: [RAW_PW, RAW_PW.slice(0, 6), RAW_PW.slice(-5)],
    counts: { "database-url": 1 },
  },
  { about: "a MySQL URL with a slash, a question mark and a space in the password", text: `mysql://root:${SLASHED_PW}@127.0.0.1:3306/shop`, secrets: [SLASHED_PW.split(" ")[0]!, SLASHED_PW.split(" ")[1]!], counts: { "database-url": 1 } },
  { about: "a MongoDB URL with several hosts and an @ in the password", text: `mongodb://ops:${upw("mongo-at")}@x@mongo-1:27017,mongo-2:27017/admin?replicaSet=rs0`, secrets: [upw("mongo-at")], counts: { "database-url": 1 } },
  { about: "an AMQP URL with a # in the password", text: `CELERY_BROKER_URL="amqps://celery:${pw("amqp-hash")}@mq.internal:5671/jobs"`, secrets: [pw("amqp-hash")], counts: { "database-url": 1 } },
  { about: "a libpq key=value connection string", text: `psql "host=db.internal port=5432 dbname=app user=app password=${alnum("libpq", 12)} sslmode=require"`, secrets: [alnum("libpq", 12)], counts: { "database-password": 1 } },
  { about: "a libpq connection string with a quoted password holding a space", text: `conn = psycopg.connect("host=db dbname=app user=etl password='${LOWER_PW}'")`, secrets: [LOWER_PW.split(" ")[0]!, LOWER_PW.split(" ")[1]!], counts: { "database-password": 1 } },
  { about: "a password of plain words in a connection string", text: `Server=sql01;Database=crm;User Id=sa;Password=${WORDS_PW};`, secrets: [WORDS_PW], counts: { "database-password": 1 } },
  { about: "a JDBC URL with the password in its query", text: `spring.datasource.url=jdbc:mysql://db:3306/shop?user=shop&password=${alnum("jdbc-q", 14)}&useSSL=true`, secrets: [alnum("jdbc-q", 14)], counts: { "database-password": 1 } },
  { about: "a JDBC SQL Server URL with semicolon properties", text: `jdbc:sqlserver://sql01:1433;databaseName=crm;user=sa;password=${alnum("jdbc-semi", 14)};encrypt=true`, secrets: [alnum("jdbc-semi", 14)], counts: { "database-password": 1 } },
  {
    about: "a .pgpass file",
    text: `$ cat ~/.pgpass\ndb.internal:5432:app:app:${alnum("pgpass-1", 16)}\n*:*:*:replicator:${PGPASS_ESCAPED}\n`,
    secrets: [alnum("pgpass-1", 16), PGPASS_ESCAPED.split("\\:")[0]!, PGPASS_ESCAPED.split("\\:")[1]!],
    counts: { "database-password": 2 },
  },
  { about: "credentials in an HTTPS URL", text: `pip install --index-url https://deploy:${upw("pip")}@pypi.acme.dev/simple acme-tools`, secrets: [upw("pip")], counts: { "url-password": 1 } },
  { about: "an Authorization header with a bearer token", text: `> GET /v1/orders HTTP/1.1\n> Authorization: Bearer ${BEARER}\n> Accept: */*`, secrets: [BEARER], counts: { "authorization-header": 1 } },
  { about: "an Authorization header with basic credentials", text: `authorization: Basic ${BASIC}`, secrets: [BASIC], counts: { "authorization-header": 1 } },
  { about: "an Authorization header in Python", text: `headers = {"Authorization": "Token ${OPAQUE}", "Accept": "application/json"}`, secrets: [OPAQUE], counts: { "authorization-header": 1 } },
  { about: "a bearer token outside a header", text: `{"auth": {"type": "http", "value": "Bearer ${OPAQUE}"}}`, secrets: [OPAQUE], counts: { "bearer-token": 1 }, format: "json" },
  { about: "a session cookie", text: `curl -H "Cookie: sessionid=${SESSION_COOKIE}; theme=dark" https://app.acme.dev/api/me`, secrets: [SESSION_COOKIE], counts: { cookie: 1 } },
  { about: "a Set-Cookie header", text: `< Set-Cookie: __Host-session=${SESSION_COOKIE}; Path=/; Secure; HttpOnly; SameSite=Lax`, secrets: [SESSION_COOKIE], counts: { cookie: 1 } },

  // ---- More services and formats
  { about: "an Alibaba Cloud access key id", text: `ALIBABA_CLOUD_ACCESS_KEY_ID=${ALIBABA}`, secrets: [ALIBABA], counts: { "alibaba-access-key-id": 1 } },
  { about: "an Amazon Bedrock API key", text: `export AWS_BEARER_TOKEN_BEDROCK=${BEDROCK}`, secrets: [BEDROCK.slice(22, 80), BEDROCK.slice(80)], counts: { "aws-bedrock-key": 1 } },
  { about: "a Cloudflare Origin CA key", text: `CLOUDFLARE_ORIGIN_CA: ${CF_ORIGIN}`, secrets: [CF_ORIGIN.slice(5, 60), CF_ORIGIN.slice(60)], counts: { "cloudflare-origin-ca-key": 1 } },
  { about: "Fly.io macaroon and org tokens", text: `FLY_API_TOKEN: FlyV1 ${FLY}\nflyctl auth token: ${FLY_ORG}`, secrets: [FLY.slice(4, 60), FLY.slice(60), FLY_ORG], counts: { "flyio-token": 2 } },
  { about: "an OpenShift user token", text: `oc login --token=${OPENSHIFT} --server=https://api.acme.dev:6443`, secrets: [OPENSHIFT.slice(7)], counts: { "openshift-token": 1 } },
  { about: "a 1Password secret key in an emergency kit", text: `Secret Key\n${OP_SECRET}\n`, secrets: [OP_SECRET.slice(3)], counts: { "onepassword-secret-key": 1 } },
  { about: "a 1Password service account token", text: `"sourceContent": "${OP_SERVICE}"`, secrets: [OP_SERVICE.slice(7, 60), OP_SERVICE.slice(60)], counts: { "onepassword-service-account-token": 1 } },
  { about: "an Artifactory API key in a Go assignment", text: `artifactoryApiKey := "${ARTIFACTORY}"`, secrets: [ARTIFACTORY], counts: { "artifactory-token": 1 } },
  { about: "a Harness personal access token", text: `harness login --api-key ${HARNESS}`, secrets: [HARNESS], counts: { "harness-token": 1 } },
  { about: "an Infracost API key in Terraform Cloud variables", text: `variable {\n  name = "INFRACOST_API_KEY"\n  secret_value = "${INFRACOST}"\n}`, secrets: [INFRACOST], counts: { "infracost-api-key": 1 } },
  { about: "a ReadMe API key", text: `rdme openapi --key=${README}`, secrets: [README], counts: { "readme-api-key": 1 } },
  { about: "a SettleMint personal access token", text: `SETTLEMINT_ACCESS_TOKEN=${SETTLEMINT}`, secrets: [SETTLEMINT], counts: { "settlemint-token": 1 } },
  { about: "a SonarQube project token", text: `mvn sonar:sonar -Dsonar.projectKey=acme ${SONAR}`, secrets: [SONAR], counts: { "sonarqube-token": 1 } },
  { about: "a Sourcegraph access token", text: `src login https://sourcegraph.acme.dev --token ${SOURCEGRAPH}`, secrets: [SOURCEGRAPH.slice(4)], counts: { "sourcegraph-token": 1 } },
  { about: "a New Relic browser key", text: `window.NREUM.loader_config = { licenseKey: "${NR_BROWSER}" }`, secrets: [NR_BROWSER], counts: { "newrelic-browser-key": 1 } },
  { about: "a Microsoft Teams incoming webhook", text: `TEAMS_WEBHOOK=https://acme.webhook.office.com/webhookb2/${TEAMS}`, secrets: [TEAMS.slice(0, 36), TEAMS.slice(37, 73), TEAMS.slice(-32)], counts: { "teams-webhook": 1 } },
  { about: "a Slack webhook written without its scheme", text: `post to hooks.slack.com/services/${SLACK_HOOK} when done`, secrets: [SLACK_HOOK], counts: { "slack-webhook": 1 } },
  { about: "an EasyPost key in a URL", text: `https://api.acme.dev/track?key=${EASYPOST}&id=42`, secrets: [EASYPOST], counts: { "easypost-api-key": 1 } },
  { about: "a Facebook page access token", text: `curl "https://graph.facebook.com/v19.0/me/feed" -d message=hi -d access_token=${FB_PAGE}`, secrets: [FB_PAGE], counts: { "facebook-access-token": 1 } },
  { about: "a Facebook app access token", text: `facebook ${FB_APP}`, secrets: [FB_APP.split("|")[1]!], counts: { "facebook-access-token": 1 } },
  { about: "a Plaid access token", text: `plaid_client.item_get(access_token="${PLAID}")`, secrets: [PLAID.slice(15)], counts: { "plaid-access-token": 1 } },
  { about: "an Adobe client secret", text: `adobeClient := "${ADOBE}"`, secrets: [ADOBE], counts: { "adobe-client-secret": 1 } },
  { about: "a 42 intra client secret", text: `FT_CLIENT_SECRET=${INTRA42}`, secrets: [INTRA42.slice(9)], counts: { "intra42-client-secret": 1 } },
  { about: "a Twitter app-only bearer token", text: `twitterClient = new TwitterApi("${TWITTER_BEARER}")`, secrets: [TWITTER_BEARER.slice(22)], counts: { "twitter-bearer-token": 1 } },
  { about: "an unsigned JWT", text: `String tokenWithNoneAlg = "${JWT_UNSIGNED}";`, secrets: [JWT_UNSIGNED.slice(20, 60)], counts: { jwt: 1 } },
  { about: "a JWT encoded again in base64", text: `id_token_b64: ${JWT_BASE64}`, secrets: [JWT_BASE64.slice(0, 60), JWT_BASE64.slice(60)], counts: { jwt: 1 } },

  {
    about: "a Kubernetes Secret with base64 data, a quoted value and a block scalar",
    text: `apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-secrets\ntype: Opaque\ndata:\n  # base64 of the real values\n  db-url: ${btoa(`postgres://api:${upw("k8s-db")}@db:5432/api`)}\n  extra: "${btoa(alnum("k8s-extra", 18))}"\n  .dockerconfigjson: |\n    ${btoa(`{"auths":{"ghcr.io":{"auth":"${btoa(`ci:${alnum("k8s-docker", 20)}`)}"}}}`)}\nstringData:\n  password: ${alnum("k8s-plain", 8)}\n`,
    secrets: [btoa(`postgres://api:${upw("k8s-db")}@db:5432/api`), btoa(alnum("k8s-extra", 18)), btoa(`{"auths":{"ghcr.io":{"auth":"${btoa(`ci:${alnum("k8s-docker", 20)}`)}"}}}`).slice(0, 40), alnum("k8s-plain", 8)],
    counts: { "kubernetes-secret": 4 },
    format: "yaml",
  },
  {
    about: "a Kubernetes Secret as kubectl prints it in JSON, data before kind",
    text: `{\n    "apiVersion": "v1",\n    "data": {\n        "token": "${btoa(alnum("k8s-json-token", 40))}",\n        "ca.crt": "${btoa(alnum("k8s-json-ca", 30))}"\n    },\n    "kind": "Secret",\n    "metadata": {"name": "builder-token"}\n}\n`,
    secrets: [btoa(alnum("k8s-json-token", 40)), btoa(alnum("k8s-json-ca", 30))],
    counts: { "kubernetes-secret": 2 },
    format: "json",
  },

  // ---- Secret-named keys, in every syntax
  {
    about: "secret keys in a JSON config",
    text: `{\n  "database": {\n    "host": "db.internal",\n    "password": "${pw("json-db")}"\n  },\n  "apiKey": "${pw("json-api")}",\n  "max_tokens": 4096\n}\n`,
    secrets: [pw("json-db"), pw("json-api")],
    counts: { "secret-assignment": 2 },
    format: "json",
  },
  {
    about: "secret keys in a YAML config",
    text: `smtp:\n  host: smtp.acme.dev\n  username: mailer\n  password: ${pw("yaml-smtp")}\n  client_secret: '${pw("yaml-oauth")}'\n  timeout: 30\n`,
    secrets: [pw("yaml-smtp"), pw("yaml-oauth")],
    counts: { "secret-assignment": 2 },
    format: "yaml",
  },
  { about: "a .env file", text: `NODE_ENV=production\nSESSION_SECRET=${pw("env-session")}\nDB_PASS="${pw("env-db")}"\nPORT=3000\n`, secrets: [pw("env-session"), pw("env-db")], counts: { "secret-assignment": 2 } },
  { about: "a one-word environment variable", text: `PGPASSWORD=${pw("pgpass")} psql -h db -U app`, secrets: [pw("pgpass")], counts: { "secret-assignment": 1 } },
  { about: "a Compose environment list", text: `    environment:\n      - POSTGRES_USER=app\n      - POSTGRES_PASSWORD=${pw("compose")}\n`, secrets: [pw("compose")], counts: { "secret-assignment": 1 }, format: "yaml" },
  {
    about: "a Kubernetes env entry naming a secret",
    text: `env:\n  - name: DB_HOST\n    value: db.internal\n  - name: DB_PASSWORD\n    value: "${pw("k8s")}"\n`,
    secrets: [pw("k8s")],
    counts: { "secret-assignment": 1 },
    format: "yaml",
  },
  {
    about: "an ECS task definition naming a secret",
    text: `{"environment": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "API_TOKEN", "value": "${pw("ecs")}"}]}`,
    secrets: [pw("ecs")],
    counts: { "secret-assignment": 1 },
    format: "json",
  },
  { about: "Python keyword arguments", text: `conn = psycopg2.connect(host="db", user="app", password="${pw("py-kw")}")`, secrets: [pw("py-kw")], counts: { "database-password": 1 } },
  { about: "a JavaScript object literal", text: `const config = { user: "app", password: '${pw("js-obj")}', port: 5432 }`, secrets: [pw("js-obj")], counts: { "secret-assignment": 1 } },
  { about: "a Go short assignment", text: `apiToken := "${pw("go")}"`, secrets: [pw("go")], counts: { "secret-assignment": 1 } },
  { about: "a Makefile immediate assignment", text: `DEPLOY_TOKEN ::= ${alnum("make-colon", 28)}\nRELEASE_TOKEN :::= "${alnum("make-3", 24)}"\n`, secrets: [alnum("make-colon", 28), alnum("make-3", 24)], counts: { "secret-assignment": 2 } },
  { about: "a Makefile conditional assignment", text: `SONAR_TOKEN ?= ${alnum("make-q", 32)}\n`, secrets: [alnum("make-q", 32)], counts: { "secret-assignment": 1 } },
  { about: "a Go variable declared with its type", text: `var jiraToken string = "${f("go-typed", LOWER + DIGITS, 24)}"`, secrets: [f("go-typed", LOWER + DIGITS, 24)], counts: { "secret-assignment": 1 } },
  { about: "a TypeScript constant declared with its type", text: `const apiToken: string = "${pw("ts-typed")}"`, secrets: [pw("ts-typed")], counts: { "secret-assignment": 1 } },
  { about: "a PHP concatenating assignment", text: `$apiToken .= "${f("php-dot", LOWER + DIGITS, 32)}";`, secrets: [f("php-dot", LOWER + DIGITS, 32)], counts: { "secret-assignment": 1 } },
  { about: "an XML element on its own lines", text: `<settings>\n  <apiToken>\n    ${f("xml-el", LOWER + DIGITS, 32)}\n  </apiToken>\n</settings>`, secrets: [f("xml-el", LOWER + DIGITS, 32)], counts: { "secret-assignment": 1 } },
  { about: "a Maven settings password element", text: `<server><id>acme</id><username>ci</username><password>${pw("maven")}</password></server>`, secrets: [pw("maven")], counts: { "secret-assignment": 1 } },
  { about: "a Java system property set in code", text: `System.setProperty("PAYMENTS_API_TOKEN", "${alnum("set-prop", 40)}");`, secrets: [alnum("set-prop", 40)], counts: { "secret-assignment": 1 } },
  { about: "an environment lookup with a literal default", text: `token := utils.GetEnvOrDefault("api_token", "${HEROKU_UUID}")`, secrets: [HEROKU_UUID], counts: { "secret-assignment": 1 } },
  { about: "a NuGet.config clear-text password", text: `<packageSourceCredentials>\n  <acme>\n    <add key="Username" value="ci" />\n    <add key="ClearTextPassword" value="${f("nuget-pw-a", UPPER, 1)}${f("nuget-pw-b", LOWER, 7)}${f("nuget-pw-c", UPPER, 1)}${f("nuget-pw-d", LOWER, 6)}" />\n  </acme>\n</packageSourceCredentials>`, secrets: [`${f("nuget-pw-a", UPPER, 1)}${f("nuget-pw-b", LOWER, 7)}${f("nuget-pw-c", UPPER, 1)}${f("nuget-pw-d", LOWER, 6)}`], counts: { "secret-assignment": 1 } },
  { about: "a service key named after the service", text: `const HEROKU_KEY = "${HEROKU_UUID}"\nconst hubspotKey = "${hex("hubspot-a", 8)}-${hex("hubspot-b", 4)}-${hex("hubspot-c", 4)}-${hex("hubspot-d", 4)}-${hex("hubspot-e", 12)}"`, secrets: [HEROKU_UUID, hex("hubspot-e", 12)], counts: { "heroku-api-key": 1, "secret-assignment": 1 } },
  { about: "a SonarQube login in a Makefile", text: `SONAR.LOGIN ::= "${alnum("sonar-login", 40)}"`, secrets: [alnum("sonar-login", 40)], counts: { "secret-assignment": 1 } },
  { about: "a Sumo Logic access id and key", text: `sumologic.accessId = "su${alnum("sumo-id", 12)}"\nsumologic.accessKey = "${alnum("sumo-key", 64)}"`, secrets: [`su${alnum("sumo-id", 12)}`, alnum("sumo-key", 64)], counts: { "secret-assignment": 2 } },
  { about: "a MessageBird client id", text: `const MessageBirdClientID = "${alnum("messagebird", 25)}"`, secrets: [alnum("messagebird", 25)], counts: { "secret-assignment": 1 } },
  { about: "a key that is only the service's name", text: `cloudflare: "${alnum("cf-bare", 40)}"\nsourcegraph: ${hex("sg-bare", 40)}`, secrets: [alnum("cf-bare", 40), hex("sg-bare", 40)], counts: { "secret-assignment": 2 } },
  { about: "numbered and abbreviated secret keys", text: `creds = ${alnum("creds", 30)}\napi_token_2 = "${alnum("numbered", 40)}"`, secrets: [alnum("creds", 30), alnum("numbered", 40)], counts: { "secret-assignment": 2 } },
  { about: "Bundler credentials for a private gem server", text: `export BUNDLE_GEMS__ACME__DEV=${hex("bundler-user", 8)}:${hex("bundler-pass", 8)}\nBUNDLE_ENTERPRISE__CONTRIBSYS__COM: "${hex("sidekiq-user", 8)}:${hex("sidekiq-pass", 8)}"`, secrets: [`${hex("bundler-user", 8)}:${hex("bundler-pass", 8)}`, `${hex("sidekiq-user", 8)}:${hex("sidekiq-pass", 8)}`], counts: { "bundler-credentials": 2 } },
  { about: "a PHP array", text: `'password' => '${pw("php")}',`, secrets: [pw("php")], counts: { "secret-assignment": 1 } },
  { about: "a Java properties file", text: `spring.datasource.username=app\nspring.datasource.password=${pw("java")}\n`, secrets: [pw("java")], counts: { "secret-assignment": 1 } },
  { about: "an INI file with spaces around =", text: `[database]\nuser = app\npassword = ${alnum("ini", 6)}42\n`, secrets: [`${alnum("ini", 6)}42`], counts: { "secret-assignment": 1 } },
  { about: "a TOML secret", text: `[auth]\nsigning_key = "${pw("toml")}"\n`, secrets: [pw("toml")], counts: { "secret-assignment": 1 } },
  { about: "an ADO.NET connection string", text: `"Server=tcp:acme.database.windows.net,1433;Database=shop;User ID=app;Password=${pw("ado")};Encrypt=True;"`, secrets: [pw("ado")], counts: { "database-password": 1 } },
  { about: "an API key header", text: `X-Api-Key: ${pw("header")}`, secrets: [pw("header")], counts: { "secret-assignment": 1 } },
  { about: "a password in a log line", text: `2026-03-01 12:00:01 WARN login retry for bob, password: ${PASSWORD}`, secrets: [PASSWORD], counts: { "secret-assignment": 1 } },
  {
    about: "JSON inside a tool call's JSON input",
    text: `[tool write] {"filePath":"/repo/config.json","content":"{\\n  \\"password\\": \\"${pw("nested")}\\"\\n}"}`,
    secrets: [pw("nested")],
    counts: { "secret-assignment": 1 },
  },
  {
    about: "YAML inside a tool call's JSON input",
    text: `{"filePath":"/repo/app.yaml","content":"db:\\n  password: ${pw("nested-yaml")}\\n  pool: 5\\n"}`,
    secrets: [pw("nested-yaml")],
    counts: { "secret-assignment": 1 },
    format: "json",
  },
  { about: "a Docker config auth entry", text: `{"auths": {"registry.acme.dev": {"auth": "${f("docker-auth", BASE64, 28)}=="}}}`, secrets: [`${f("docker-auth", BASE64, 28)}==`], counts: { "secret-assignment": 1 }, format: "json" },
  { about: "a --password= flag", text: `psql --host=db --password=${pw("flag-eq")} --dbname=app`, secrets: [pw("flag-eq")], counts: { "secret-flag": 1 } },
  { about: "a --token flag with a space", text: `./release.sh --token ${pw("flag-sp")} --dry-run`, secrets: [pw("flag-sp")], counts: { "secret-flag": 1 } },
  { about: "a quoted --client-secret flag", text: `az login --service-principal -u app --client-secret "${pw("flag-q")}" --tenant acme`, secrets: [pw("flag-q")], counts: { "secret-flag": 1 } },
  { about: "a Java system property", text: `java -Djavax.net.ssl.keyStorePassword=${pw("jvm")} -jar app.jar`, secrets: [pw("jvm")], counts: { "secret-flag": 1 } },
  { about: "curl basic auth", text: `curl -u admin:${pw("curl")} https://jenkins.acme.dev/api/json`, secrets: [pw("curl")], counts: { "secret-flag": 1 } },
  { about: "curl basic auth with a quoted password", text: `curl --user deploy:'${pw("curl-q")}' -X PATCH https://api.acme.dev/v1/items/7`, secrets: [pw("curl-q")], counts: { "secret-flag": 1 } },
  { about: "curl basic auth with each part quoted", text: `curl -X POST --user "${CURL_ID}":"${alnum("curl-pair", 14)}" https://api.acme.dev/v1/translate`, secrets: [CURL_ID, alnum("curl-pair", 14)], counts: { "secret-flag": 1 } },
  { about: "curl basic auth on a continued line", text: `curl https://api.acme.dev/oauth2/token \\\n  -d grant_type=client_credentials \\\n  --user ${alnum("curl-id", 15).toLowerCase()}:${alnum("curl-cont", 15)}`, secrets: [alnum("curl-id", 15).toLowerCase(), alnum("curl-cont", 15)], counts: { "secret-flag": 1 } },
  { about: "curl with an API key as the user and no password", text: `curl -u "${alnum("curl-key", 18)}:" https://api.acme.dev/v1/charges`, secrets: [alnum("curl-key", 18)], counts: { "secret-flag": 1 } },
  { about: "an Authorization header with an Api-Token scheme", text: `curl -H "Authorization: Api-Token ${hex("api-token", 40)}" https://monitor.acme.dev/api/v2/metrics`, secrets: [hex("api-token", 40)], counts: { "authorization-header": 1 } },
  { about: "a mysql -p password", text: `mysql -h 127.0.0.1 -u root -p${pw("mysql-p")} shop < dump.sql`, secrets: [pw("mysql-p")], counts: { "secret-flag": 1 } },
  { about: "an sshpass password", text: `sshpass -p '${pw("sshpass")}' ssh deploy@web-01`, secrets: [pw("sshpass")], counts: { "secret-flag": 1 } },
  { about: "a docker login -p password", text: `docker login -u ci -p ${pw("docker-p")} registry.acme.dev`, secrets: [pw("docker-p")], counts: { "secret-flag": 1 } },
  {
    about: "secrets in URL query parameters",
    text: `GET https://api.acme.dev/v1/report?access_token=${upw("q-access")}&format=csv&api_key=${upw("q-key")}`,
    secrets: [upw("q-access"), upw("q-key")],
    counts: { "url-query-secret": 2 },
  },
  { about: "a client secret in a form body", text: `grant_type=client_credentials&client_id=acme&client_secret=${upw("form")}`, secrets: [upw("form")], counts: { "url-query-secret": 1 } },
]
