#!/usr/bin/env bash
# Builds tools/podserve, the one process that serves every simulated pod's ports
# inside the pod's network namespace (docs/adr/0014-pod-network.md, "Serving").
#
# Output: ${OUTPROBE_CACHE_DIR:-$HOME/.cache/outprobe}/podserve/<key>/podserve
# (cache rules in scripts/lib/go-tool.sh).
#
# Usage: build-podserve.sh   build if needed; prints the binary's path last
# Progress goes to stderr; the binary's path is the only line on stdout.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib/go-tool.sh
source "$ROOT/scripts/lib/go-tool.sh"
go_tool_init podserve "$ROOT/tools/podserve"
go_tool_build '' 1 -ldflags '-s -w' # bump the 1 when the flags change
