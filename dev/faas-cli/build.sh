#!/usr/bin/env bash
# Builds faas-cli from its vendored sources (faas-cli-src.tar.xz in the shared tools folder: the Go
# module proxy refuses github.com/openfaas/*), offline, with the machine's Go (GOTOOLCHAIN=local,
# -mod=vendor), and caches it outside git, keyed by the upstream commit the archive holds:
#
#   ${XDG_CACHE_HOME:-~/.cache}/sdewan-functions/faas-cli-<commit, 12 hex>/faas-cli
#
# The tools folder: SDEWAN_TOOLS_DIR, else <repo>/../shared/tools, else /work/shared/tools.
# Prints the binary's path as the last line of stdout. Progress goes to stderr.
#
# Only when nothing can be built here (no Go, or no archive) does the script record why in
# <cache dir>/UNAVAILABLE, print it and exit 0; the faas-cli tests then skip with that reason
# (test/unit/packaging/faas-cli.test.ts). With CI=true that is a failure too (exit 1, the reason on
# stderr): nothing skips in CI. Any other failure (a compile error) exits 1.
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

go_tool_from_archive faas-cli-src.tar.xz faas-cli faas-cli \
  "faas-cli cannot be built on this machine; its checks skip with this reason. Point FAAS_CLI at a faas-cli binary to run them."
bin="$tool_result"
go_tool_cached_or_lock "$out_dir" "$bin" go_tool_archive_unavailable \
  "install Go 1.24 or newer (faas-cli's go.mod), or set FAAS_CLI" -mod=vendor go_tool_have "$bin"
rm -f "$out_dir/UNAVAILABLE"

work="$out_dir/src"
log "faas-cli $commit: unpacking $tools_archive"
go_tool_unpack "$tools_archive" "$work"
mod="$work/faas-cli"
total="$(go_tool_count_deps "$mod" .)"
log "compiling up to $total packages ($(go_tool_elapsed) elapsed)"
still_compiling() { log "still compiling ($(go_tool_elapsed) elapsed)"; }
ldflags="-s -w -X github.com/openfaas/faas-cli/version.GitCommit=$commit"
if ! go_tool_build "$mod" . "$bin" "$ldflags" still_compiling; then
  log "go build failed. To see why: cd $mod && GOFLAGS=-mod=vendor GOTOOLCHAIN=local go build ."
  exit 1
fi
rm -rf "$work"
log "built $bin in $(go_tool_elapsed)"
echo "$bin"
