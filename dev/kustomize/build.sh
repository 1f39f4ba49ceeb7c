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
# shellcheck source=../lib/go-tool.sh
source "$here/../lib/go-tool.sh"
go_tool_init kustomize
go_tool_parse_args --print-path 2,12 "$@"
go_tool_use_env_binary KUSTOMIZE

mod="$here/go"
go_mod_require version "$mod/go.mod" sigs.k8s.io/kustomize/kustomize/v5 kustomize
out_dir="$(go_tool_cache_dir "kustomize-$version")"
bin="$out_dir/kustomize"
if [[ $print_only == 1 ]]; then echo "$bin"; exit 0; fi
go_tool_cached_or_lock "$out_dir" "$bin" go_tool_fail "install Go 1.24 or newer, or set KUSTOMIZE" \
  -mod=readonly go_tool_have "$bin"

log "kustomize $version: downloading modules and compiling ($(go_tool_elapsed) elapsed)"
still_building() { log "still building ($(go_tool_elapsed) elapsed)"; }
if ! go_tool_build "$mod" sigs.k8s.io/kustomize/kustomize/v5 "$bin" "-s -w" still_building; then
  log "go build failed. To see why: cd $mod && GOTOOLCHAIN=local go build sigs.k8s.io/kustomize/kustomize/v5"
  exit 1
fi
log "built $bin in $(go_tool_elapsed) ($("$bin" version 2>/dev/null || echo "version unknown"))"
echo "$bin"
