#!/usr/bin/env bash
# Builds tools/kubelet-diff, the kubelet-side runner of the differential test tier
# (test/differential): the kubelet's own pkg/probe/{http,tcp,grpc} from the
# k8s.io/kubernetes version pinned in tools/kubelet-diff/go.mod. Only the probe
# packages and what they import are compiled, not the kubelet.
#
# Output: ${OUTPROBE_CACHE_DIR:-$HOME/.cache/outprobe}/kubelet-diff/<key>/kubelet-diff,
# where <key> starts with the k8s version (cache rules in scripts/lib/go-tool.sh).
#
# Usage: build-kubelet-diff.sh   build if needed; prints the binary's path last
# Progress goes to stderr; the binary's path is the only line on stdout.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SRC="$ROOT/tools/kubelet-diff"
# shellcheck source=lib/go-tool.sh
source "$ROOT/scripts/lib/go-tool.sh"
go_tool_init kubelet-diff "$SRC"

K8S_VERSION=$(cd "$SRC" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
PLANE_K8S=$(cd "$ROOT/tools/k8s" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
if [[ "$PLANE_K8S" != "$K8S_VERSION" ]]; then
  log "tools/kubelet-diff pins k8s.io/kubernetes $K8S_VERSION but tools/k8s pins $PLANE_K8S: bump both together"
  exit 1
fi
K8S_MINOR=${K8S_VERSION#v1.}; K8S_MINOR=${K8S_MINOR%%.*}
pkg=k8s.io/component-base/version
go_tool_build "k8s-$K8S_VERSION." 1 \
  -ldflags "-s -w -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$K8S_MINOR -X $pkg.gitTreeState=clean"
