#!/usr/bin/env bash
# Builds tools/pause, the sandbox container of the real nodes' pods (static Go).
#
# Output: ${OUTPROBE_CACHE_DIR:-$HOME/.cache/outprobe}/pause/<key>/pause
# (cache rules in scripts/lib/go-tool.sh).
#
# Usage: build-pause.sh   build if needed; prints the binary's path last
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib/go-tool.sh
source "$ROOT/scripts/lib/go-tool.sh"
go_tool_init pause "$ROOT/tools/pause"
go_tool_build '' 1 -ldflags '-s -w'
