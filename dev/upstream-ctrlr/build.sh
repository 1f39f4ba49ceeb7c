#!/usr/bin/env bash
# Builds the upstream SDEWAN CRD controller (akraino-edge-stack/icn-sdwan platform/crd-ctrlr, Go,
# controller-runtime 0.11), the peer `npm run bench` compares our functions with, from the source
# archive in the shared tools folder (sdewan-upstream-crd-ctrlr-src.tar.xz). Its dependencies are
# NOT vendored: they come from the Go module proxy, go.mod and go.sum unchanged (-mod=readonly).
# Built with the machine's Go (GOTOOLCHAIN=local) and cached outside git, keyed by the upstream
# commit the archive holds:
#
#   ${XDG_CACHE_HOME:-~/.cache}/sdewan-functions/sdewan-upstream-crd-ctrlr-<commit, 12 hex>/
#     manager   the controller (its main.go, unmodified)
#     crds/     its own CRDs (config/crd/bases): same group and plurals as ours, other schemas
#
# The tools folder: SDEWAN_TOOLS_DIR, else <repo>/../shared/tools, else /work/shared/tools.
# Cold: ~1 min with a warm Go build cache; with empty Go caches (modules downloaded, standard
# library compiled) 6.3 min on two cores under load 16 (2 min of CPU); cached: instant.
#
# Prints the cache directory as the last line of stdout; progress goes to stderr. When nothing can
# be built here (no Go, no archive, or the module proxy refuses a dependency) it records why in
# <cache dir>/UNAVAILABLE, prints it and exits 0: the bench's upstream rows then say that reason.
# With CI=true that is a failure too (exit 1, the reason on stderr): .ci/run builds it, so it must
# be there. Any other failure (a compile error) exits 1.
#
# Options: --force (rebuild), --print-path (print the cache directory, and exit).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/go-tool.sh
source "$here/../lib/go-tool.sh"
go_tool_init upstream-ctrlr
go_tool_parse_args --print-path 2,22 "$@"

go_tool_from_archive sdewan-upstream-crd-ctrlr-src.tar.xz sdewan-upstream-crd-ctrlr "" \
  "the upstream controller cannot be built here; the bench's upstream rows say this reason."

manager="$out_dir/manager"
have_all() { go_tool_have "$manager" && [[ -d "$out_dir/crds" ]]; }
go_tool_cached_or_lock "$out_dir" "$out_dir" go_tool_archive_unavailable \
  "install Go 1.18 or newer (the controller's go.mod)" -mod=readonly have_all
rm -f "$out_dir/UNAVAILABLE"

work="$out_dir/src"
log "icn-sdwan $commit: unpacking $tools_archive"
go_tool_unpack "$tools_archive" "$work"
mod="$work/icn-sdwan/platform/crd-ctrlr/src"
if [[ ! -f "$mod/go.mod" ]]; then
  log "the archive has no icn-sdwan/platform/crd-ctrlr/src/go.mod"
  exit 1
fi

# Module downloads first, so that a proxy refusal is told apart from a compile error.
log "downloading its modules from the Go module proxy ($(go_tool_elapsed) elapsed)"
download_log="$out_dir/download.log"
if ! (cd "$mod" && "$GO" mod download) >"$download_log" 2>&1; then
  reason="$(grep -m1 -E 'proxy|403|404|410|dial|timeout|refused' "$download_log" || head -1 "$download_log")"
  go_tool_archive_unavailable "the Go module proxy did not serve its dependencies: $reason"
fi

still_compiling() { log "still compiling ($(go_tool_elapsed) elapsed)"; }
log "compiling ($(go_tool_elapsed) elapsed)"
if ! go_tool_build "$mod" . "$manager" "-s -w" still_compiling; then
  log "go build failed. To see why: cd $mod && GOTOOLCHAIN=local go build ."
  exit 1
fi
rm -rf "$out_dir/crds"
cp -r "$mod/config/crd/bases" "$out_dir/crds"
rm -rf "$work" "$download_log"
log "built in $(go_tool_elapsed): $out_dir"
echo "$out_dir"
