#!/usr/bin/env bash
# Builds the local control plane's binaries from the Go modules pinned in tools/*:
#   etcd (tools/etcd), kube-apiserver, kube-controller-manager, kube-scheduler,
#   kubectl, kube-proxy (tools/k8s), kwok (tools/kwok) and helm (tools/helm).
#
# Output: ${OUTPROBE_CACHE_DIR:-$HOME/.cache/outprobe}/bin/<key>/, where <key> names
# the versions plus a hash of the tools modules and the Go version. A finished
# directory holds a .stamp file and is never rebuilt. Builds take an flock, work in
# <key>.partial/ (one finished component at a time, so a retry resumes) and rename
# it to <key> at the end, so concurrent builds never see a half-written directory.
#
# Usage: build-cluster-bins.sh            build if needed; prints the bin dir last
#        build-cluster-bins.sh --print-dir print the bin dir (no build)
# Progress goes to stderr; the bin directory is the only line on stdout.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TOOLS="$ROOT/tools"
BUILD_REV=2 # bump when the flags or the set of binaries below change

export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS='-trimpath -buildvcs=false'
GO=(nice -n 19 go)
START=$(date +%s)

log() { printf '[cluster:build +%4ss] %s\n' "$(( $(date +%s) - START ))" "$*" >&2; }
modver() { (cd "$TOOLS/$1" && go list -m -f '{{.Version}}' "$2"); }

K8S_VERSION=$(modver k8s k8s.io/kubernetes)
ETCD_VERSION=$(modver etcd go.etcd.io/etcd/server/v3)
KWOK_VERSION=$(modver kwok sigs.k8s.io/kwok)
HELM_VERSION=$(modver helm helm.sh/helm/v4)
GO_VERSION=$(go env GOVERSION)

# The staging modules of k8s.io/kubernetes are required at v0.0.0 and replaced by
# ./staging/src paths in its own go.mod; a consumer must replace each one with the
# matching v0.<minor>.<patch> tag. Derive the list from that go.mod (idempotent).
sync_k8s_replaces() {
  local gomod staging mods m
  gomod=$(cd "$TOOLS/k8s" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" \
    | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  [[ -f "$gomod" ]] || { log "cannot find go.mod of k8s.io/kubernetes@$K8S_VERSION"; exit 1; }
  staging="v0.${K8S_VERSION#v1.}"
  mods=$( { awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" { print $1 }' "$gomod"
            awk '$2 == "=>" && $3 ~ /^\.\/staging\// { print $1 }' "$gomod"; } | sort -u)
  for m in $mods; do (cd "$TOOLS/k8s" && go mod edit "-replace=$m=$m@$staging"); done
  if ! git -C "$ROOT" diff --quiet -- tools/k8s/go.mod 2>/dev/null; then
    log "tools/k8s/go.mod changed after deriving replaces: run 'go mod tidy' in tools/k8s and commit"
  fi
}
sync_k8s_replaces

# Only the plane's modules (in glob order, so the key matches earlier builds): tools/kubelet-diff has its own build.
HASH=$( { echo "$BUILD_REV $GO_VERSION"; cat "$TOOLS"/{etcd,helm,k8s,kwok}/go.mod "$TOOLS"/{etcd,helm,k8s,kwok}/go.sum; } | sha256sum | cut -c1-12)
KEY="k8s-$K8S_VERSION.etcd-$ETCD_VERSION.kwok-$KWOK_VERSION.helm-$HELM_VERSION.$GO_VERSION.$HASH"
CACHE="${OUTPROBE_CACHE_DIR:-$HOME/.cache/outprobe}/bin"
OUT="$CACHE/$KEY"

if [[ "${1:-}" == "--print-dir" ]]; then echo "$OUT"; exit 0; fi
if [[ -f "$OUT/.stamp" ]]; then log "cached: $OUT"; echo "$OUT"; exit 0; fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock-$KEY"
if ! flock -n 9; then
  log "another build of $KEY is running; waiting for its lock"
  flock 9
fi
if [[ -f "$OUT/.stamp" ]]; then log "built by a concurrent run: $OUT"; echo "$OUT"; exit 0; fi

WORK="$OUT.partial"
mkdir -p "$WORK"
BUILD_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)

# build <name> <module dir> <ldflags> <go build args...>: builds into a temp dir,
# then moves the results into $WORK and marks the component done.
build() {
  local name=$1 dir=$2 ldflags=$3 t0 tmp
  shift 3
  if [[ -f "$WORK/.done-$name" ]]; then log "$name: already built in $WORK"; return; fi
  t0=$(date +%s)
  log "$name: building (go build -p 2, nice 19) ..."
  tmp=$(mktemp -d "$WORK/.tmp-$name.XXXXXX")
  (cd "$TOOLS/$dir" && exec "${GO[@]}" build -p 2 -ldflags "-s -w $ldflags" -o "$tmp/" "$@") &
  local pid=$!
  trap 'kill "$pid" 2>/dev/null || true' EXIT # a killed build script takes its go build along
  local n=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    n=$((n + 1))
    if (( n % 30 == 0 )) && kill -0 "$pid" 2>/dev/null; then log "$name: still building ($(( $(date +%s) - t0 ))s)"; fi
  done
  wait "$pid" || { log "$name: FAILED after $(( $(date +%s) - t0 ))s"; rm -rf "$tmp"; exit 1; }
  mv -f "$tmp"/* "$WORK/"
  rmdir "$tmp"
  touch "$WORK/.done-$name"
  trap - EXIT
  log "$name: done in $(( $(date +%s) - t0 ))s"
}

K8S_MINOR=${K8S_VERSION#v1.}; K8S_MINOR=${K8S_MINOR%%.*}
k8s_ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$K8S_MINOR"
  k8s_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$BUILD_DATE"
done

build etcd etcd "-X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION" go.etcd.io/etcd/server/v3
if [[ -f "$WORK/server" ]]; then mv -f "$WORK/server" "$WORK/etcd"; fi
if [[ -f "$WORK/v3" ]]; then mv -f "$WORK/v3" "$WORK/etcd"; fi
build kubernetes k8s "$k8s_ldflags" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl k8s.io/kubernetes/cmd/kube-proxy
build kwok kwok "-X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v} -X sigs.k8s.io/kwok/pkg/consts.PreRelease=GA" \
  sigs.k8s.io/kwok/cmd/kwok
build helm helm "-X helm.sh/helm/v4/internal/version.version=$HELM_VERSION -X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
  helm.sh/helm/v4/cmd/helm

cat > "$WORK/.stamp" <<EOF
built=$BUILD_DATE
go=$GO_VERSION
kubernetes=$K8S_VERSION
etcd=$ETCD_VERSION
kwok=$KWOK_VERSION
helm=$HELM_VERSION
hash=$HASH
EOF
rm -f "$WORK"/.done-*
rm -rf "$OUT"
mv "$WORK" "$OUT"
log "all binaries in $OUT ($(( $(date +%s) - START ))s)"
echo "$OUT"
