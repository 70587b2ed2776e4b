#!/usr/bin/env bash
# Builds Cloudprober (github.com/cloudprober/cloudprober/cmd/cloudprober, the version
# pinned in tools/cloudprober/go.mod) for `npm run bench:probes` (issue 16).
#
# Output: ${OUTPROBE_CACHE_DIR:-$HOME/.cache/outprobe}/cloudprober/<key>/cloudprober
# (cache rules in scripts/lib/go-tool.sh: the key hashes go.mod, go.sum and the Go version).
#
# Usage: build-cloudprober.sh   build if needed; prints the binary's path last
# Progress goes to stderr; the binary's path is the only line on stdout.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib/go-tool.sh
source "$ROOT/scripts/lib/go-tool.sh"
go_tool_init cloudprober "$ROOT/tools/cloudprober"
VERSION=$(cd "$GO_TOOL_SRC" && go list -m -f '{{.Version}}' github.com/cloudprober/cloudprober)
GO_TOOL_PKG=github.com/cloudprober/cloudprober/cmd/cloudprober
# Cloudprober's Makefile sets its version the same way (-X main.version).
go_tool_build "$VERSION." 1 -ldflags "-s -w -X main.version=$VERSION" # bump the 1 when the flags change
