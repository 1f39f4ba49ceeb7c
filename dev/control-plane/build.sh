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
force=0
print_dir=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --print-dir) print_dir=1 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

log() { printf '[control-plane build] %s\n' "$*" >&2; }

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
kube_version="$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" { print $3 }' "$kube_mod/go.mod")"
etcd_version="$(awk '$1 == "require" && $2 == "go.etcd.io/etcd/server/v3" { print $3 }' "$etcd_mod/go.mod")"
if [[ ! "$kube_version" =~ ^v1\.([0-9]+)\.[0-9]+$ ]]; then
  log "cannot read the k8s.io/kubernetes version from $kube_mod/go.mod"; exit 1
fi
kube_minor="${BASH_REMATCH[1]}"
if [[ -z "$etcd_version" ]]; then
  log "cannot read the go.etcd.io/etcd/server/v3 version from $etcd_mod/go.mod"; exit 1
fi

cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/sdewan-functions"
out_dir="$cache_root/kube-$kube_version-etcd-$etcd_version"
if [[ $print_dir == 1 ]]; then echo "$out_dir"; exit 0; fi

cached() { [[ -x "$out_dir/kube-apiserver" && -x "$out_dir/etcd" ]]; }
if [[ $force == 0 ]] && cached; then
  log "cached: $out_dir"
  echo "$out_dir"
  exit 0
fi

GO="${GO:-go}"
if ! command -v "$GO" >/dev/null; then
  log "'$GO' not found: install Go 1.26 or newer, or point KUBEBUILDER_ASSETS at envtest binaries"
  exit 1
fi
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly -buildvcs=false"
parallel="${GO_BUILD_PARALLEL:-2}"

mkdir -p "$out_dir"
# One build at a time per cache dir (two test runs starting together must not both compile).
exec 9>"$out_dir/.build.lock"
if ! flock -n 9; then
  log "another build holds $out_dir/.build.lock; waiting for it"
  flock 9
fi
if [[ $force == 0 ]] && cached; then
  log "cached (built by the other process): $out_dir"
  echo "$out_dir"
  exit 0
fi

start=$SECONDS
elapsed() { local s=$((SECONDS - start)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

# build <label> <module dir> <package> <output> <ldflags>
build() {
  local label="$1" dir="$2" pkg="$3" out="$4" ldflags="$5"
  log "$label: resolving and downloading modules ($(elapsed) elapsed)"
  local total
  total="$(cd "$dir" && "$GO" list -deps "$pkg" | wc -l)"
  log "$label: compiling up to $total packages with go build -p $parallel ($(elapsed) elapsed)"
  local tmp="$out.tmp.$$"
  local n=0 line status=0 count="$out.count.$$"
  echo 0 >"$count"
  # A heartbeat for the long quiet stretches (big packages, the link).
  ( while sleep 30 && kill -0 $$ 2>/dev/null; do log "$label: $(cat "$count" 2>/dev/null)/$total packages compiled ($(elapsed) elapsed)"; done ) &
  local ticker=$!
  # go build -v names each package as it is compiled (cached ones are not named).
  { (cd "$dir" && "$GO" build -p "$parallel" -v -trimpath -ldflags "$ldflags" -o "$tmp" "$pkg" 2>&1) |
    while IFS= read -r line; do
      if [[ "$line" =~ ^[A-Za-z0-9_./~-]+$ ]]; then
        n=$((n + 1))
        echo "$n" >"$count"
      else
        printf '%s\n' "$line" >&2
      fi
    done; } || status=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  rm -f "$count"
  if [[ $status != 0 || ! -x "$tmp" ]]; then
    rm -f "$tmp"
    log "$label: go build failed. To see why, run:"
    log "  cd $dir && GOTOOLCHAIN=local CGO_ENABLED=0 go build -o /tmp/$label $pkg"
    exit 1
  fi
  mv -f "$tmp" "$out"
  log "$label: built $out ($(elapsed) elapsed)"
}

build etcd "$etcd_mod" go.etcd.io/etcd/server/v3 "$out_dir/etcd" "-s -w"
build kube-apiserver "$kube_mod" k8s.io/kubernetes/cmd/kube-apiserver "$out_dir/kube-apiserver" \
  "-s -w -X k8s.io/component-base/version.gitVersion=$kube_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$kube_minor -X k8s.io/component-base/version.gitTreeState=clean"

log "kube-apiserver: $("$out_dir/kube-apiserver" --version 2>&1)"
log "etcd: $("$out_dir/etcd" --version 2>&1 | head -1)"
log "done in $(elapsed): $out_dir"
echo "$out_dir"
