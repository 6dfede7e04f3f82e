#!/usr/bin/env bash
# Deploys the API. Secrets come from Vault at run time; nothing is stored in this script.
set -euo pipefail

: "${VAULT_ADDR:?VAULT_ADDR must be set}"
TOKEN=$(vault kv get -field=token secret/ci/deploy)
export GITHUB_TOKEN="$(gh auth token)"
export NPM_TOKEN=${NPM_TOKEN:-}
read -r -s -p "Password: " PASSWORD
echo

curl -fsS -H "Authorization: Bearer $TOKEN" -H "Accept: application/json" \
  "https://api.acme.dev/v1/deployments?ref=${GIT_SHA}&token_type=bearer"
curl -fsS -H "Authorization: Bearer ${TOKEN}" https://api.acme.dev/v1/health

docker login -u "$REGISTRY_USER" --password-stdin registry.acme.dev <<< "$REGISTRY_PASSWORD"
mysql -h db -u root -p "$DB_NAME" < migrations/001_init.sql
kubectl create secret generic api-secrets --from-literal=db-password="$DB_PASSWORD" --dry-run=client -o yaml
./release --token "$TOKEN" --password-file ~/.config/acme/password --api-key-env ACME_API_KEY

if [[ -z "${PASSWORD}" ]]; then
  echo "error: the password is empty" >&2
  exit 1
fi
