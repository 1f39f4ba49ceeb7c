#!/usr/bin/env bash
# Builds the node mode's binaries (dev/node/README.md) from their Go modules and caches them
# outside git, keyed by version:
#
#   ${XDG_CACHE_HOME:-~/.cache}/sdewan-functions/node-<k8s>-coredns-<v>-registry-<v>/
#     kubelet kube-proxy kube-scheduler kube-controller-manager kubectl  (go/kube: the same
#                             k8s.io/kubernetes and staging replaces as the API server's module)
#     agnhost                 (go/kube: k8s.io/kubernetes/test/images/agnhost, the conformance
#                             tools' server and client: the NetworkPolicy scenario's Pods)
#     coredns                 (go/coredns: cluster DNS)
#     registry crane          (go/registry: the node's OCI registry, and the client that pushes)
#
# Prints the directory as the last line of stdout; progress goes to stderr (a line every 30 s).
# Options: --force (rebuild even if cached), --print-dir (print the cache dir and exit).
# Environment: GO_BUILD_PARALLEL (default 2, go build -p), GO (default "go").
# Cold, on 2 busy cores with the API server's Go build cache warm: ~8 min (kubelet ~5.5 of them).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/go-tool.sh
source "$here/../lib/go-tool.sh"
go_tool_init node
go_tool_parse_args --print-dir 2,16 "$@"

go_mod_require kube_version "$here/go/kube/go.mod" k8s.io/kubernetes k8s.io/kubernetes
go_mod_require coredns_version "$here/go/coredns/go.mod" github.com/coredns/coredns coredns
go_mod_require registry_version "$here/go/registry/go.mod" github.com/distribution/distribution/v3 registry
if [[ ! "$kube_version" =~ ^v1\.([0-9]+)\.[0-9]+$ ]]; then
  log "cannot read the k8s.io/kubernetes version from $here/go/kube/go.mod"; exit 1
fi
kube_minor="${BASH_REMATCH[1]}"

out_dir="$(go_tool_cache_dir "node-$kube_version-coredns-$coredns_version-registry-$registry_version")"
if [[ $print_only == 1 ]]; then echo "$out_dir"; exit 0; fi
kube_commands=(kubelet kube-proxy kube-scheduler kube-controller-manager kubectl)
binaries=()
for c in "${kube_commands[@]}" agnhost coredns registry crane; do binaries+=("$out_dir/$c"); done
go_tool_cached_or_lock "$out_dir" "$out_dir" go_tool_fail "install Go 1.26 or newer" -mod=readonly \
  go_tool_have "${binaries[@]}"

# build <label> <module dir> <package> <ldflags>: skips what an interrupted run already built
build() {
  if [[ -x "$out_dir/$1" && $force == 0 ]]; then log "$1: already built"; return; fi
  go_tool_build_step "$1" "$2" "$3" "$out_dir/$1" "$4"
}

kube_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$kube_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$kube_minor -X k8s.io/component-base/version.gitTreeState=clean"
for c in "${kube_commands[@]}"; do
  build "$c" "$here/go/kube" "k8s.io/kubernetes/cmd/$c" "$kube_ldflags"
done
build agnhost "$here/go/kube" k8s.io/kubernetes/test/images/agnhost "-s -w"
build coredns "$here/go/coredns" github.com/coredns/coredns "-s -w"
build registry "$here/go/registry" github.com/distribution/distribution/v3/cmd/registry "-s -w"
build crane "$here/go/registry" github.com/google/go-containerregistry/cmd/crane "-s -w"

log "kubelet: $("$out_dir/kubelet" --version 2>&1)"
log "done in $(go_tool_elapsed): $out_dir"
echo "$out_dir"
