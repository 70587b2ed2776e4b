#!/usr/bin/env bash
# Builds tools/kubelet-diff, the kubelet-side runner of the differential test tier
# (test/differential): the kubelet's own pkg/probe/{http,tcp,grpc} from the
# k8s.io/kubernetes version pinned in tools/kubelet-diff/go.mod. Only the probe
# packages and what they import are compiled, not the kubelet.
#
# Output: ${OUTPROBE_CACHE_DIR:-$HOME/.cache/outprobe}/kubelet-diff/<key>/kubelet-diff,
# where <key> is the k8s version, the Go version and a hash of the program's
# sources, go.mod and go.sum (any source change is a new key). A finished
# directory is never rebuilt; builds go to a temp dir renamed into place.
#
# Usage: build-kubelet-diff.sh   build if needed; prints the binary's path last
# Progress goes to stderr; the binary's path is the only line on stdout.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SRC="$ROOT/tools/kubelet-diff"
BUILD_REV=1 # bump when the flags below change

export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS='-trimpath -buildvcs=false -mod=readonly'
START=$(date +%s)
log() { printf '[kubelet-diff:build +%4ss] %s\n' "$(( $(date +%s) - START ))" "$*" >&2; }

K8S_VERSION=$(cd "$SRC" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
GO_VERSION=$(go env GOVERSION)
PLANE_K8S=$(cd "$ROOT/tools/k8s" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
if [[ "$PLANE_K8S" != "$K8S_VERSION" ]]; then
  log "tools/kubelet-diff pins k8s.io/kubernetes $K8S_VERSION but tools/k8s pins $PLANE_K8S: bump both together"
  exit 1
fi
HASH=$( { echo "$BUILD_REV $GO_VERSION"; cd "$SRC"; for f in go.mod go.sum $(find . -name '*.go' | LC_ALL=C sort); do echo "== $f"; cat "$f"; done; } \
  | sha256sum | cut -c1-12)
KEY="k8s-$K8S_VERSION.$GO_VERSION.$HASH"
CACHE="${OUTPROBE_CACHE_DIR:-$HOME/.cache/outprobe}/kubelet-diff"
OUT="$CACHE/$KEY"
BIN="$OUT/kubelet-diff"

if [[ -x "$BIN" ]]; then log "cached: $BIN"; echo "$BIN"; exit 0; fi
mkdir -p "$CACHE"
TMP=$(mktemp -d "$CACHE/.tmp-$KEY.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

K8S_MINOR=${K8S_VERSION#v1.}; K8S_MINOR=${K8S_MINOR%%.*}
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$K8S_MINOR -X $pkg.gitTreeState=clean"
log "building (go build -p 2, nice 19) ..."
(cd "$SRC" && nice -n 19 go build -p 2 -ldflags "$ldflags" -o "$TMP/kubelet-diff" .)
mkdir -p "$OUT.partial.$$"
mv "$TMP/kubelet-diff" "$OUT.partial.$$/"
if ! mv -T "$OUT.partial.$$" "$OUT" 2>/dev/null; then rm -rf "$OUT.partial.$$"; fi # a concurrent build won
log "built $BIN ($(( $(date +%s) - START ))s)"
echo "$BIN"
