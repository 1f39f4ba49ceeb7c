#!/usr/bin/env bash
# Builds the cyclonus oracle (dev/netpol-oracle/cyclonus: a wrapper module pinning cyclonus in
# go.mod / go.sum) with the machine's Go (GOTOOLCHAIN=local) and caches it outside git:
#
#   ${XDG_CACHE_HOME:-~/.cache}/sdewan-functions/netpol-cyclonus-<cyclonus version>-<source hash>/netpol-cyclonus
#
# and beside it cyclonus's own command, `cyclonus` (github.com/mattfenwick/cyclonus/cmd/cyclonus,
# the same version: `cyclonus generate` judges the real node, test/node/netpol-cyclonus.test.ts).
#
# Prints the binary's path as the last line of stdout; progress goes to stderr.
# test/unit/netpol/cyclonus.property.test.ts compares the compiler with it.
# Honours NETPOL_CYCLONUS=<path to a built binary> (builds nothing).
# Options: --force (rebuild), --print-path (print where the binary goes, and exit).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
force=0
print_path=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --print-path) print_path=1 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-cyclonus.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

log() { printf '[cyclonus build] %s\n' "$*" >&2; }

if [[ -n "${NETPOL_CYCLONUS:-}" ]]; then
  if [[ ! -x "$NETPOL_CYCLONUS" ]]; then log "NETPOL_CYCLONUS=$NETPOL_CYCLONUS is not executable"; exit 1; fi
  echo "$NETPOL_CYCLONUS"
  exit 0
fi

mod="$here/cyclonus"
version="$(awk '$1 == "github.com/mattfenwick/cyclonus" { print $2 }' "$mod/go.mod")"
if [[ -z "$version" ]]; then log "cannot read the cyclonus version from $mod/go.mod"; exit 1; fi
source_hash="$(cat "$mod/go.mod" "$mod/go.sum" "$mod"/*.go | sha256sum | cut -c1-12)"
out_dir="${XDG_CACHE_HOME:-$HOME/.cache}/sdewan-functions/netpol-cyclonus-$version-$source_hash"
bin="$out_dir/netpol-cyclonus"
command_bin="$out_dir/cyclonus"
if [[ $print_path == 1 ]]; then echo "$bin"; exit 0; fi
if [[ $force == 0 && -x "$bin" && -x "$command_bin" ]]; then log "cached: $bin"; echo "$bin"; exit 0; fi

GO="${GO:-go}"
if ! command -v "$GO" >/dev/null; then log "'$GO' not found: install Go 1.22 or newer, or set NETPOL_CYCLONUS"; exit 1; fi
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly -buildvcs=false"

mkdir -p "$out_dir"
exec 9>"$out_dir/.build.lock"
flock 9
if [[ $force == 0 && -x "$bin" && -x "$command_bin" ]]; then log "cached (built by another process): $bin"; echo "$bin"; exit 0; fi

log "cyclonus $version: downloading modules and compiling"
(cd "$mod" && "$GO" build -p "${GO_BUILD_PARALLEL:-2}" -trimpath -ldflags "-s -w" -o "$bin.tmp" .)
mv "$bin.tmp" "$bin"
log "cyclonus $version: the cyclonus command"
(cd "$mod" && "$GO" build -p "${GO_BUILD_PARALLEL:-2}" -trimpath -ldflags "-s -w" -o "$command_bin.tmp" github.com/mattfenwick/cyclonus/cmd/cyclonus)
mv "$command_bin.tmp" "$command_bin"
log "built: $bin, $command_bin"
echo "$bin"
