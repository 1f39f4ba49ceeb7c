#!/usr/bin/env bash
# Builds faas-cli from its Go module (wrapper module dev/faas-cli/go, version pinned in go.mod)
# with the machine's Go (GOTOOLCHAIN=local) and caches it outside git:
#
#   ${XDG_CACHE_HOME:-~/.cache}/sdewan-functions/faas-cli-<version>/faas-cli
#
# Prints the binary's path as the last line of stdout. Progress goes to stderr.
#
# When the Go module proxy refuses the module (403/404/410: "not available"), nothing can be
# built here: the script records why in <cache dir>/UNAVAILABLE, prints it, and exits 0, so CI
# goes on; the faas-cli tests then skip with that reason (test/unit/packaging/faas-cli.test.ts).
# Any other failure (a compile error, no Go) exits 1.
#
# Honours FAAS_CLI=<path to a faas-cli binary> (builds nothing).
# Options: --force (rebuild), --print-path (print where the binary goes, and exit).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
force=0
print_path=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --print-path) print_path=1 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

log() { printf '[faas-cli build] %s\n' "$*" >&2; }

if [[ -n "${FAAS_CLI:-}" ]]; then
  if [[ ! -x "$FAAS_CLI" ]]; then log "FAAS_CLI=$FAAS_CLI is not executable"; exit 1; fi
  log "using FAAS_CLI=$FAAS_CLI; nothing to build"
  echo "$FAAS_CLI"
  exit 0
fi

mod="$here/go"
version="$(awk '$1 == "require" && $2 == "github.com/openfaas/faas-cli" { print $3 }' "$mod/go.mod")"
if [[ -z "$version" ]]; then log "cannot read the faas-cli version from $mod/go.mod"; exit 1; fi
out_dir="${XDG_CACHE_HOME:-$HOME/.cache}/sdewan-functions/faas-cli-$version"
bin="$out_dir/faas-cli"
if [[ $print_path == 1 ]]; then echo "$bin"; exit 0; fi
if [[ $force == 0 && -x "$bin" ]]; then log "cached: $bin"; echo "$bin"; exit 0; fi

GO="${GO:-go}"
if ! command -v "$GO" >/dev/null; then log "'$GO' not found: install Go 1.26 or newer, or set FAAS_CLI"; exit 1; fi
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -buildvcs=false"

mkdir -p "$out_dir"
exec 9>"$out_dir/.build.lock"
flock 9
if [[ $force == 0 && -x "$bin" ]]; then log "cached (built by another process): $bin"; echo "$bin"; exit 0; fi
rm -f "$out_dir/UNAVAILABLE"

start=$SECONDS
elapsed() { local s=$((SECONDS - start)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

# A scratch copy of the wrapper module: go.sum is resolved there, never in the repository.
work="$out_dir/module"
rm -rf "$work" && mkdir -p "$work" && cp "$mod/go.mod" "$mod/tools.go" "$work/"
log "faas-cli $version: resolving modules ($(elapsed) elapsed)"
resolve_log="$out_dir/resolve.log"
if ! (cd "$work" && "$GO" mod tidy) >"$resolve_log" 2>&1; then
  if grep -Eq '(403 Forbidden|404 Not Found|410 Gone|not available|unknown revision)' "$resolve_log"; then
    reason="the Go module proxy did not serve github.com/openfaas/faas-cli@$version: $(grep -E 'openfaas' "$resolve_log" | head -2 | tr '\n' ' ')"
    printf '%s\n' "$reason" >"$out_dir/UNAVAILABLE"
    log "UNAVAILABLE: $reason"
    log "faas-cli cannot be built on this machine; its checks will be skipped with this reason."
    log "Point FAAS_CLI at a faas-cli binary to run them."
    echo "$bin"
    exit 0
  fi
  cat "$resolve_log" >&2
  log "resolving modules failed (see above)"
  exit 1
fi
total="$(cd "$work" && "$GO" list -deps github.com/openfaas/faas-cli | wc -l)"
log "compiling up to $total packages ($(elapsed) elapsed)"
( while sleep 30 && kill -0 $$ 2>/dev/null; do log "still compiling ($(elapsed) elapsed)"; done ) >/dev/null &
ticker=$!
status=0
(cd "$work" && "$GO" build -p "${GO_BUILD_PARALLEL:-2}" -trimpath -ldflags "-s -w" \
  -o "$bin.tmp" github.com/openfaas/faas-cli) || status=$?
kill "$ticker" 2>/dev/null || true
wait "$ticker" 2>/dev/null || true
if [[ $status != 0 ]]; then rm -f "$bin.tmp"; log "go build failed"; exit 1; fi
mv -f "$bin.tmp" "$bin"
log "built $bin in $(elapsed): $("$bin" version --short-version 2>/dev/null || echo "version unknown")"
echo "$bin"
