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
# shellcheck source=../lib/go-tool.sh
source "$here/../lib/go-tool.sh"
go_tool_init cyclonus
go_tool_parse_args --print-path 2,13 "$@"
go_tool_use_env_binary NETPOL_CYCLONUS

mod="$here/cyclonus"
go_mod_require version "$mod/go.mod" github.com/mattfenwick/cyclonus cyclonus
source_hash="$(cat "$mod/go.mod" "$mod/go.sum" "$mod"/*.go | sha256sum | cut -c1-12)"
out_dir="$(go_tool_cache_dir "netpol-cyclonus-$version-$source_hash")"
bin="$out_dir/netpol-cyclonus"
command_bin="$out_dir/cyclonus"
if [[ $print_only == 1 ]]; then echo "$bin"; exit 0; fi
go_tool_cached_or_lock "$out_dir" "$bin" go_tool_fail "install Go 1.22 or newer, or set NETPOL_CYCLONUS" \
  -mod=readonly go_tool_have "$bin" "$command_bin"

log "cyclonus $version: downloading modules and compiling"
(cd "$mod" && "$GO" build -p "$go_tool_parallel" -trimpath -ldflags "-s -w" -o "$bin.tmp" .)
mv "$bin.tmp" "$bin"
log "cyclonus $version: the cyclonus command"
(cd "$mod" && "$GO" build -p "$go_tool_parallel" -trimpath -ldflags "-s -w" -o "$command_bin.tmp" github.com/mattfenwick/cyclonus/cmd/cyclonus)
mv "$command_bin.tmp" "$command_bin"
log "built: $bin, $command_bin"
echo "$bin"
