#!/usr/bin/env bash
# Builds tools/podserve, the one process that serves every simulated pod's ports
# inside the pod's network namespace (docs/adr/0014-pod-network.md, "Serving").
#
# Output: ${OUTPROBE_CACHE_DIR:-$HOME/.cache/outprobe}/podserve/<key>/podserve,
# where <key> is the Go version and a hash of the program's sources, go.mod and
# go.sum (any source change is a new key). A finished directory is never
# rebuilt; builds go to a temp dir renamed into place.
#
# Usage: build-podserve.sh   build if needed; prints the binary's path last
# Progress goes to stderr; the binary's path is the only line on stdout.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SRC="$ROOT/tools/podserve"
BUILD_REV=1 # bump when the flags below change

export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS='-trimpath -buildvcs=false -mod=readonly'
if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then export PATH="/usr/local/go/bin:$PATH"; fi
START=$(date +%s)
log() { printf '[podserve:build +%4ss] %s\n' "$(( $(date +%s) - START ))" "$*" >&2; }

GO_VERSION=$(go env GOVERSION)
HASH=$( { echo "$BUILD_REV $GO_VERSION"; cd "$SRC"; for f in go.mod go.sum $(find . -name '*.go' | LC_ALL=C sort); do echo "== $f"; cat "$f"; done; } \
  | sha256sum | cut -c1-12)
KEY="$GO_VERSION.$HASH"
CACHE="${OUTPROBE_CACHE_DIR:-$HOME/.cache/outprobe}/podserve"
OUT="$CACHE/$KEY"
BIN="$OUT/podserve"

if [[ -x "$BIN" ]]; then log "cached: $BIN"; echo "$BIN"; exit 0; fi
mkdir -p "$CACHE"
TMP=$(mktemp -d "$CACHE/.tmp-$KEY.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

log "building (go build -p 2, nice 19) ..."
(cd "$SRC" && nice -n 19 go build -p 2 -ldflags '-s -w' -o "$TMP/podserve" .)
mkdir -p "$OUT.partial.$$"
mv "$TMP/podserve" "$OUT.partial.$$/"
if ! mv -T "$OUT.partial.$$" "$OUT" 2>/dev/null; then rm -rf "$OUT.partial.$$"; fi # a concurrent build won
log "built $BIN ($(( $(date +%s) - START ))s)"
echo "$BIN"
