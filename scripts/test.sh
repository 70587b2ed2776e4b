#!/usr/bin/env bash
# The one test command (README "Run the tests"): installs what the tests need
# and runs every tier that exists. Safe to run on a fresh clone.
set -euo pipefail
cd "$(dirname "$0")/.."

section() { printf '\n=== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

section "npm ci"
npm ci --no-audit --no-fund

section "lint, typecheck, unit tests"
npm test

section "cluster binaries (built from Go modules once, cached outside the repo)"
bash scripts/build-cluster-bins.sh

section "integration tests (real etcd + kube-apiserver)"
npm run test:integration

section "e2e tests (full local control plane)"
npm run test:e2e
