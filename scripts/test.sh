#!/usr/bin/env bash
# The one test command (README "The two commands"): installs what the tests need
# and runs every tier that exists. Safe to run on a fresh clone.
set -euo pipefail
cd "$(dirname "$0")/.."

section() { printf '\n=== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
# Runs one tier, keeping node's "ℹ pass N" / "ℹ fail N" lines for the final tally.
tier() {
  "$@" 2>&1 | tee >(grep -aE '^ℹ (pass|fail) [0-9]+$' >> "$summary")
}

section "npm ci"
npm ci --no-audit --no-fund

# The pod network (network namespaces, kube-proxy in nftables mode) and the real nodes
# (containerd, runc, the CNI plugins: docs/adr/0047-real-nodes.md) need these commands;
# as root on Debian, install the missing ones (one apt-get update first).
section "pod network and real node tools"
missing=()
for pair in nft:nftables conntrack:conntrack ip:iproute2 arping:iputils-arping containerd:containerd runc:runc nsenter:util-linux \
            /usr/lib/cni/bridge:containernetworking-plugins; do
  want=${pair%%:*}
  if [[ $want == /* ]]; then [[ -x $want ]] || missing+=("${pair#*:}")
  else command -v "$want" >/dev/null 2>&1 || missing+=("${pair#*:}"); fi
done
if (( ${#missing[@]} == 0 )); then
  echo "nft, conntrack, ip, arping, containerd, runc, nsenter, CNI plugins: all present"
elif [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${missing[*]} (apt-get update + install)"
  apt-get update -qq >/dev/null 2>&1 || echo "apt-get update failed; installing from the lists at hand"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "installed ${missing[*]}"
else
  echo "missing ${missing[*]}: not root or no apt-get, so not installed"
fi
# CI runs the network tests for real: a machine that cannot build the pod network fails
# here, unless OUTPROBE_ALLOW_NO_PODNET=1 says skipping them is intended (a laptop without root).
if ! ./node_modules/.bin/node scripts/check-podnet.ts; then
  if [[ "${OUTPROBE_ALLOW_NO_PODNET:-}" == 1 ]]; then
    echo "OUTPROBE_ALLOW_NO_PODNET=1: the tests that need the pod network will skip"
  else
    echo "set OUTPROBE_ALLOW_NO_PODNET=1 to run the other tiers without it"
    exit 1
  fi
fi

section "lint, typecheck, unit tests"
tier npm test

section "cluster binaries (built from Go modules once, cached outside the repo)"
bash scripts/build-cluster-bins.sh
bash scripts/build-kubelet.sh
# promtool checks the chart's alerts (docs/adr/0061-alerts.md); cached like the others.
bash scripts/build-promtool.sh

section "differential tests (the kubelet's own probers vs outprobe's executors)"
tier npm run test:differential

section "integration tests (real etcd + kube-apiserver)"
tier npm run test:integration

section "e2e tests (full local control plane)"
tier npm run test:e2e

# The chart with outprobe's own image on real nodes (a real kubelet, containerd, runc).
# A host that cannot run them fails here with the reason, unless
# OUTPROBE_ALLOW_NO_REAL_NODES=1 says skipping the tier is intended.
section "e2e tests on real nodes (the chart and outprobe's image under a real kubelet)"
if ./node_modules/.bin/node scripts/check-real-nodes.ts; then
  tier npm run test:e2e-nodes
elif [[ "${OUTPROBE_ALLOW_NO_REAL_NODES:-}" == 1 ]]; then
  echo "OUTPROBE_ALLOW_NO_REAL_NODES=1: the real-node tier is skipped"
else
  echo "the real-node tier cannot run here: FAIL (set OUTPROBE_ALLOW_NO_REAL_NODES=1 to skip it on purpose)"
  exit 1
fi

sleep 1 # let the tally's process substitutions finish writing
passed=$(awk '$2 == "pass" { n += $3 } END { print n + 0 }' "$summary")
failed=$(awk '$2 == "fail" { n += $3 } END { print n + 0 }' "$summary")
section "all tiers"
echo "${passed} passed, ${failed} failed"
