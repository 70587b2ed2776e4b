#!/usr/bin/env bash
# Builds promtool (github.com/prometheus/prometheus/cmd/promtool, pinned by
# tools/promtool/go.mod) for the chart's alert tests: `promtool check rules` and
# `promtool test rules` on the rendered PrometheusRule (docs/adr/0061-alerts.md).
#
# Output: ${OUTPROBE_CACHE_DIR:-$HOME/.cache/outprobe}/promtool/<key>/promtool, where
# <key> starts with the prometheus module's version (cache rules in scripts/lib/go-tool.sh).
#
# Usage: build-promtool.sh   build if needed; prints the binary's path last
# Progress goes to stderr; the binary's path is the only line on stdout.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SRC="$ROOT/tools/promtool"
# shellcheck source=lib/go-tool.sh
source "$ROOT/scripts/lib/go-tool.sh"
go_tool_init promtool "$SRC"
PROM_VERSION=$(cd "$SRC" && go list -m -f '{{.Version}}' github.com/prometheus/prometheus)
GO_TOOL_PKG=github.com/prometheus/prometheus/cmd/promtool
# remove_all_sd leaves out every service-discovery plugin (cloud SDKs: most of the build);
# checking and unit-testing rules needs none of them.
go_tool_build "prometheus-$PROM_VERSION." 2 -tags remove_all_sd -ldflags '-s -w' # bump the 2 when the flags change
