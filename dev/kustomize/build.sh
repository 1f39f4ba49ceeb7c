#!/usr/bin/env bash
# Builds kustomize from its Go module (wrapper module dev/kustomize/go; version and checksums
# pinned in go.mod / go.sum) with the machine's Go (GOTOOLCHAIN=local) and caches it outside git:
#
#   ${XDG_CACHE_HOME:-~/.cache}/sdewan-functions/kustomize-<version>/kustomize
#
# Prints the binary's path as the last line of stdout; progress goes to stderr. The packaging
# tests run `kustomize build` on every install variant (test/unit/packaging/kustomize.test.ts).
#
# Honours KUSTOMIZE=<path to a kustomize binary> (builds nothing).
# Options: --force (rebuild), --print-path (print where the binary goes, and exit).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
force=0
print_path=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --print-path) print_path=1 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

log() { printf '[kustomize build] %s\n' "$*" >&2; }

if [[ -n "${KUSTOMIZE:-}" ]]; then
  if [[ ! -x "$KUSTOMIZE" ]]; then log "KUSTOMIZE=$KUSTOMIZE is not executable"; exit 1; fi
  log "using KUSTOMIZE=$KUSTOMIZE; nothing to build"
  echo "$KUSTOMIZE"
  exit 0
fi

mod="$here/go"
version="$(awk '$1 == "require" && $2 == "sigs.k8s.io/kustomize/kustomize/v5" { print $3 }' "$mod/go.mod")"
if [[ -z "$version" ]]; then log "cannot read the kustomize version from $mod/go.mod"; exit 1; fi
out_dir="${XDG_CACHE_HOME:-$HOME/.cache}/sdewan-functions/kustomize-$version"
bin="$out_dir/kustomize"
if [[ $print_path == 1 ]]; then echo "$bin"; exit 0; fi
if [[ $force == 0 && -x "$bin" ]]; then log "cached: $bin"; echo "$bin"; exit 0; fi

GO="${GO:-go}"
if ! command -v "$GO" >/dev/null; then log "'$GO' not found: install Go 1.24 or newer, or set KUSTOMIZE"; exit 1; fi
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly -buildvcs=false"

mkdir -p "$out_dir"
exec 9>"$out_dir/.build.lock"
flock 9
if [[ $force == 0 && -x "$bin" ]]; then log "cached (built by another process): $bin"; echo "$bin"; exit 0; fi

start=$SECONDS
elapsed() { local s=$((SECONDS - start)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
log "kustomize $version: downloading modules and compiling ($(elapsed) elapsed)"
( while sleep 30 && kill -0 $$ 2>/dev/null; do log "still building ($(elapsed) elapsed)"; done ) >/dev/null &
ticker=$!
status=0
(cd "$mod" && "$GO" build -p "${GO_BUILD_PARALLEL:-2}" -trimpath -ldflags "-s -w" \
  -o "$bin.tmp" sigs.k8s.io/kustomize/kustomize/v5) || status=$?
kill "$ticker" 2>/dev/null || true
wait "$ticker" 2>/dev/null || true
if [[ $status != 0 ]]; then
  rm -f "$bin.tmp"
  log "go build failed. To see why: cd $mod && GOTOOLCHAIN=local go build sigs.k8s.io/kustomize/kustomize/v5"
  exit 1
fi
mv -f "$bin.tmp" "$bin"
log "built $bin in $(elapsed) ($("$bin" version 2>/dev/null || echo "version unknown"))"
echo "$bin"
