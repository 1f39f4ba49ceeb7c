#!/usr/bin/env bash
# Builds Knative Eventing's parts the tests run, from the vendored sources in the shared tools
# folder (knative-eventing-adapters-src.tar.xz, unpacking to kn-min/: the Go module proxy refuses
# knative.dev/eventing), offline with the machine's Go (GOTOOLCHAIN=local, -mod=vendor), cached
# outside git and keyed by the upstream commit the archive holds:
#
#   ${XDG_CACHE_HOME:-~/.cache}/sdewan-functions/knative-eventing-<commit, 12 hex>/
#     apiserver_receive_adapter   the ApiServerSource receive adapter (./cmd/apiserver_receive_adapter)
#     mtping                      the PingSource adapter (./cmd/mtping), which delivers the resync
#     validate-manifests          dev/knative/validate/main.go, copied into kn-min/ and built there:
#                                 Knative's own decoding, defaulting and validation of manifests
#     kn-min/                     the unpacked sources (config/ holds Knative's CRDs)
#
# The tools folder: SDEWAN_TOOLS_DIR, else <repo>/../shared/tools, else /work/shared/tools.
# Cold: some minutes on two busy cores and ~1 GB of Go build cache; cached: instant. The validator
# is rebuilt (seconds, warm) whenever its source changes.
#
# Prints the cache directory as the last line of stdout; progress goes to stderr. Only when nothing
# can be built here (no Go, or no archive) does it record why in <cache dir>/UNAVAILABLE, print
# it and exit 0; the tests that need these binaries then skip with that reason. With CI=true that
# is a failure too (exit 1, the reason on stderr): nothing skips in CI. Any other failure (a
# compile error) exits 1.
#
# Options: --force (rebuild), --print-path (print the cache directory, and exit).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/go-tool.sh
source "$here/../lib/go-tool.sh"
go_tool_init knative
go_tool_parse_args --print-path 2,22 "$@"

go_tool_from_archive knative-eventing-adapters-src.tar.xz knative-eventing "" \
  "the Knative adapter and validator cannot be built here; their tests skip with this reason."

adapter="$out_dir/apiserver_receive_adapter"
mtping="$out_dir/mtping"
validator="$out_dir/validate-manifests"
validator_src="$here/validate/main.go"
# The validator's source as last built, to rebuild it when the committed one changes.
validator_stamp="$out_dir/validate-manifests.go"
have_all() {
  go_tool_have "$adapter" || return 1
  go_tool_have "$mtping" || return 1
  [[ ! -f "$validator_src" ]] || { go_tool_have "$validator" && cmp -s "$validator_src" "$validator_stamp"; }
}
go_tool_cached_or_lock "$out_dir" "$out_dir" go_tool_archive_unavailable \
  "install Go 1.25 or newer (kn-min/go.mod)" -mod=vendor have_all
rm -f "$out_dir/UNAVAILABLE"

src="$out_dir/kn-min"
if [[ $force == 1 || ! -f "$src/go.mod" ]]; then
  log "knative eventing $commit: unpacking $tools_archive"
  go_tool_unpack "$tools_archive" "$out_dir"
fi
still_compiling() { log "still compiling ($(go_tool_elapsed) elapsed)"; }

# build <output> <package>: unless built already (and no --force)
build() {
  if [[ $force == 0 ]] && go_tool_have "$1"; then return; fi
  local total
  total="$(go_tool_count_deps "$src" "$2")"
  log "$(basename "$1"): compiling up to $total packages ($(go_tool_elapsed) elapsed)"
  if ! go_tool_build "$src" "$2" "$1" "-s -w" still_compiling; then
    log "go build failed. To see why: cd $src && GOFLAGS=-mod=vendor GOTOOLCHAIN=local go build $2"
    exit 1
  fi
}
build "$adapter" ./cmd/apiserver_receive_adapter
build "$mtping" ./cmd/mtping

if [[ -f "$validator_src" ]] &&
  { [[ $force == 1 ]] || ! go_tool_have "$validator" || ! cmp -s "$validator_src" "$validator_stamp"; }; then
  mkdir -p "$src/cmd/sdewan-validate-manifests"
  cp "$validator_src" "$src/cmd/sdewan-validate-manifests/main.go"
  log "validate-manifests: compiling ($(go_tool_elapsed) elapsed)"
  if ! go_tool_build "$src" ./cmd/sdewan-validate-manifests "$validator" "-s -w" still_compiling; then
    log "go build failed. To see why: cd $src && GOFLAGS=-mod=vendor GOTOOLCHAIN=local go build ./cmd/sdewan-validate-manifests"
    exit 1
  fi
  cp "$validator_src" "$validator_stamp"
fi
log "built in $(go_tool_elapsed): $out_dir"
echo "$out_dir"
