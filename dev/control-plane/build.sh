#!/usr/bin/env bash
# Builds kube-apiserver and etcd from their Go modules (wrapper modules under
# dev/control-plane/go/) and caches them outside git, keyed by version:
#
#   ${XDG_CACHE_HOME:-~/.cache}/sdewan-functions/kube-<k8s>-etcd-<etcd>/{kube-apiserver,etcd}
#
# Prints the directory holding both binaries as the last line of stdout.
# The wrapper modules are go/apiserver (k8s.io/kubernetes + one replace per staging module) and
# go/etcdserver (go.etcd.io/etcd/server/v3); their go.mod files pin the versions.
# Progress goes to stderr.
#
# Honours (and then builds nothing):
#   KUBEBUILDER_ASSETS           a directory with envtest's kube-apiserver and etcd
#   TEST_ASSET_KUBE_APISERVER    path to a kube-apiserver binary  } both must be set
#   TEST_ASSET_ETCD              path to an etcd binary            }
#
# Options: --force (rebuild even if cached), --print-dir (print the cache dir and exit).
# Environment: GO_BUILD_PARALLEL (default 2, go build -p), GO (default "go").
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/go-tool.sh
source "$here/../lib/go-tool.sh"
go_tool_init control-plane
go_tool_parse_args --print-dir 2,19 "$@"

# --- Binaries supplied by the user: build nothing. ------------------------------------------
if [[ -n "${TEST_ASSET_KUBE_APISERVER:-}" || -n "${TEST_ASSET_ETCD:-}" ]]; then
  for f in "${TEST_ASSET_KUBE_APISERVER:-}" "${TEST_ASSET_ETCD:-}"; do
    if [[ -z "$f" || ! -x "$f" ]]; then
      log "TEST_ASSET_KUBE_APISERVER and TEST_ASSET_ETCD must both point at executables (got '${TEST_ASSET_KUBE_APISERVER:-}', '${TEST_ASSET_ETCD:-}')"
      exit 1
    fi
  done
  log "using TEST_ASSET_KUBE_APISERVER / TEST_ASSET_ETCD; nothing to build"
  dirname "$TEST_ASSET_KUBE_APISERVER"
  exit 0
fi
if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  if [[ -x "$KUBEBUILDER_ASSETS/kube-apiserver" && -x "$KUBEBUILDER_ASSETS/etcd" ]]; then
    log "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS; nothing to build"
    echo "$KUBEBUILDER_ASSETS"
    exit 0
  fi
  log "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS has no executable kube-apiserver and etcd"
  exit 1
fi

# --- Versions come from the wrapper modules: go.mod is the single source of truth. ----------
kube_mod="$here/go/apiserver"
etcd_mod="$here/go/etcdserver"
go_mod_require kube_version "$kube_mod/go.mod" k8s.io/kubernetes k8s.io/kubernetes
go_mod_require etcd_version "$etcd_mod/go.mod" go.etcd.io/etcd/server/v3 go.etcd.io/etcd/server/v3
if [[ ! "$kube_version" =~ ^v1\.([0-9]+)\.[0-9]+$ ]]; then
  log "cannot read the k8s.io/kubernetes version from $kube_mod/go.mod"; exit 1
fi
kube_minor="${BASH_REMATCH[1]}"

out_dir="$(go_tool_cache_dir "kube-$kube_version-etcd-$etcd_version")"
if [[ $print_only == 1 ]]; then echo "$out_dir"; exit 0; fi
binaries=("$out_dir/kube-apiserver" "$out_dir/etcd")
go_tool_cached_or_lock "$out_dir" "$out_dir" go_tool_fail \
  "install Go 1.26 or newer, or point KUBEBUILDER_ASSETS at envtest binaries" -mod=readonly \
  go_tool_have "${binaries[@]}"

go_tool_build_step etcd "$etcd_mod" go.etcd.io/etcd/server/v3 "$out_dir/etcd" "-s -w"
go_tool_build_step kube-apiserver "$kube_mod" k8s.io/kubernetes/cmd/kube-apiserver "$out_dir/kube-apiserver" \
  "-s -w -X k8s.io/component-base/version.gitVersion=$kube_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$kube_minor -X k8s.io/component-base/version.gitTreeState=clean"

log "kube-apiserver: $("$out_dir/kube-apiserver" --version 2>&1)"
log "etcd: $("$out_dir/etcd" --version 2>&1 | head -1)"
log "done in $(go_tool_elapsed): $out_dir"
echo "$out_dir"
