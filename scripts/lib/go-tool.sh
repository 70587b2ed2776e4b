# Shared by the scripts that build one small Go program of tools/ and cache it
# outside the repository (build-podserve.sh, build-kubelet-diff.sh).
#
# The cache entry is ${OUTPROBE_CACHE_DIR:-$HOME/.cache/outprobe}/<name>/<key>/<name>,
# where <key> is the caller's prefix and a hash of BUILD_REV, the Go version, and
# the program's go.mod, go.sum and *.go files (any source change is a new key).
# A finished directory is never rebuilt; builds go to a temp directory renamed
# into place, so a concurrent build of the same key is harmless.
#
# Usage (after `set -euo pipefail`):
#   source "$ROOT/scripts/lib/go-tool.sh"
#   go_tool_init <name> <src-dir>           # exports the Go env, defines log()
#   go_tool_build <key-prefix> <build-rev> [go build flags...]
# go_tool_build prints the binary's path as its only stdout line and exits.
# GO_TOOL_PKG (default .) names the package to build, e.g. a `tool` of go.mod.

go_tool_init() {
  GO_TOOL_NAME=$1
  GO_TOOL_SRC=$2
  export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS='-trimpath -buildvcs=false -mod=readonly'
  if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then export PATH="/usr/local/go/bin:$PATH"; fi
  GO_TOOL_START=$(date +%s)
  GO_VERSION=$(go env GOVERSION)
}

log() { printf '[%s:build +%4ss] %s\n' "$GO_TOOL_NAME" "$(( $(date +%s) - GO_TOOL_START ))" "$*" >&2; }

go_tool_build() {
  local prefix=$1 rev=$2
  shift 2
  local hash key cache out bin tmp
  hash=$( { echo "$rev $GO_VERSION"; cd "$GO_TOOL_SRC"; for f in go.mod go.sum $(find . -name '*.go' | LC_ALL=C sort); do echo "== $f"; cat "$f"; done; } \
    | sha256sum | cut -c1-12)
  key="$prefix$GO_VERSION.$hash"
  cache="${OUTPROBE_CACHE_DIR:-$HOME/.cache/outprobe}/$GO_TOOL_NAME"
  out="$cache/$key"
  bin="$out/$GO_TOOL_NAME"
  if [[ -x "$bin" ]]; then log "cached: $bin"; echo "$bin"; exit 0; fi
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.tmp-$key.XXXXXX")
  # shellcheck disable=SC2064 # expand now: the trap runs after this function returns
  trap "rm -rf '$tmp'" EXIT
  log "building (go build -p 2, nice 19) ..."
  (cd "$GO_TOOL_SRC" && nice -n 19 go build -p 2 "$@" -o "$tmp/$GO_TOOL_NAME" "${GO_TOOL_PKG:-.}")
  mkdir -p "$out.partial.$$"
  mv "$tmp/$GO_TOOL_NAME" "$out.partial.$$/"
  if ! mv -T "$out.partial.$$" "$out" 2>/dev/null; then rm -rf "$out.partial.$$"; fi # a concurrent build won
  log "built $bin ($(( $(date +%s) - GO_TOOL_START ))s)"
  echo "$bin"
  exit 0
}
