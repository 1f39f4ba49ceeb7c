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
# shellcheck source=../lib/go-tool.sh
source "$here/../lib/go-tool.sh"
go_tool_init faas-cli
go_tool_parse_args --print-path 2,16 "$@"
go_tool_use_env_binary FAAS_CLI

mod="$here/go"
go_mod_require version "$mod/go.mod" github.com/openfaas/faas-cli faas-cli
out_dir="$(go_tool_cache_dir "faas-cli-$version")"
bin="$out_dir/faas-cli"
if [[ $print_only == 1 ]]; then echo "$bin"; exit 0; fi
go_tool_exit_if_cached "$bin" "$bin"

go_tool_find_go 1.26 "set FAAS_CLI"
# No -mod=readonly: go.sum is resolved (in a scratch copy of the module, below).
go_tool_environment
go_tool_lock "$out_dir" "$bin" "$bin"
rm -f "$out_dir/UNAVAILABLE"

# A scratch copy of the wrapper module: go.sum is resolved there, never in the repository.
work="$out_dir/module"
rm -rf "$work" && mkdir -p "$work" && cp "$mod/go.mod" "$mod/tools.go" "$work/"
log "faas-cli $version: resolving modules ($(go_tool_elapsed) elapsed)"
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
total="$(go_tool_count_deps "$work" github.com/openfaas/faas-cli)"
log "compiling up to $total packages ($(go_tool_elapsed) elapsed)"
still_compiling() { log "still compiling ($(go_tool_elapsed) elapsed)"; }
if ! go_tool_build "$work" github.com/openfaas/faas-cli "$bin" "-s -w" still_compiling; then
  log "go build failed"
  exit 1
fi
log "built $bin in $(go_tool_elapsed): $("$bin" version --short-version 2>/dev/null || echo "version unknown")"
echo "$bin"
