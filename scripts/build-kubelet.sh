#!/usr/bin/env bash
# Builds the kubelet of the real nodes (docs/adr/0047-real-nodes.md) from the same
# k8s.io/kubernetes module and version as the rest of the plane. Its tools module,
# tools/kubelet, is tools/k8s's go.mod (the same staging replaces and versions) plus the
# kubelet's own dependencies in go.sum, so the plane's cache key (a hash of tools/k8s)
# does not change and Go's build cache shares every package both compile. v1.37 still runs on a
# cgroup v1 host when its configuration says failCgroupV1: false (a deprecation
# warning and an Event, no refusal), so the kubelet is the plane's own version.
#
# Output: ${OUTPROBE_CACHE_DIR:-$HOME/.cache/outprobe}/kubelet/<key>/kubelet, where
# <key> starts with the k8s version (cache rules in scripts/lib/go-tool.sh).
#
# Usage: build-kubelet.sh   build if needed; prints the binary's path last
# Progress goes to stderr; the binary's path is the only line on stdout.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SRC="$ROOT/tools/kubelet"
# shellcheck source=lib/go-tool.sh
source "$ROOT/scripts/lib/go-tool.sh"
go_tool_init kubelet "$SRC"

K8S_VERSION=$(cd "$SRC" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
PLANE_K8S=$(cd "$ROOT/tools/k8s" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
if [[ "$PLANE_K8S" != "$K8S_VERSION" ]]; then
  log "tools/kubelet pins k8s.io/kubernetes $K8S_VERSION but tools/k8s pins $PLANE_K8S: bump both together (copy tools/k8s/go.mod, then go get k8s.io/kubernetes/cmd/kubelet@<version> in tools/kubelet)"
  exit 1
fi
K8S_MINOR=${K8S_VERSION#v1.}; K8S_MINOR=${K8S_MINOR%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$K8S_MINOR -X $pkg.gitTreeState=clean"
done
GO_TOOL_PKG=k8s.io/kubernetes/cmd/kubelet
go_tool_build "k8s-$K8S_VERSION." 1 -ldflags "$ldflags"
