#!/usr/bin/env bash
# What changed in Codex since each file of this plugin was last audited against it.
#   CODEX_REPO=/path/to/codex ./scripts/check-codex-drift.sh [--json] [--update-ref FILE...]
# Exit 0: aligned; 1: drift; 2: setup error. The work is done by dist/scripts/check-codex-drift.js
# (scripts/check-codex-drift.ts), which `npm install` builds.
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"
script="$root/dist/scripts/check-codex-drift.js"
for tool in git node; do
  command -v "$tool" >/dev/null 2>&1 || { echo "check-codex-drift: $tool is required" >&2; exit 2; }
done
if [ ! -f "$script" ]; then
  echo "check-codex-drift: $script is missing; run npm install (or npm run build) first" >&2
  exit 2
fi
exec node "$script" "$@"
