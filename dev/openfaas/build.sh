#!/usr/bin/env bash
# Builds the OpenFaaS CE renderer: faas-netes CE's own code answering the gateway's deploy and
# secret requests against a fake cluster and printing the Deployments, Services and Secrets it
# would create (dev/openfaas/render/: a file added to faas-netes's pkg/handlers and a main). From
# the vendored sources in the shared tools folder (openfaas-ce-src.tar.xz, unpacking to
# faas-netes/ and faas/gateway/: the Go module proxy refuses github.com/openfaas/*), offline with
# the machine's Go (GOTOOLCHAIN=local, -mod=vendor), cached outside git and keyed by the
# faas-netes commit the archive holds:
#
#   ${XDG_CACHE_HOME:-~/.cache}/sdewan-functions/openfaas-ce-<commit, 12 hex>/sdewan-openfaas-render
#
# The renderer is rebuilt (seconds, warm) whenever dev/openfaas/render/ changes. OpenFaaS CE
# itself (faas-netes, the gateway) is not built: it refuses to start without Internet access by
# design (docs/deploy.md), and that check is never worked around here.
#
# The tools folder: SDEWAN_TOOLS_DIR, else <repo>/../shared/tools, else /work/shared/tools.
# Cold: 244 s of CPU, 5 min 46 s on two busy cores, ~1 GB of Go build cache (client-go and its
# fake clientset); cached: instant.
#
# Prints the binary's path as the last line of stdout; progress goes to stderr. Only when nothing
# can be built here (no Go, or no archive) does it record why in <cache dir>/UNAVAILABLE, print
# the path and exit 0; the tests that need it then skip with that reason. With CI=true that is a
# failure too (exit 1, the reason on stderr): nothing skips in CI. Any other failure (a compile
# error) exits 1.
#
# Honours OPENFAAS_RENDER=<path to a built renderer> (builds nothing).
# Options: --force (rebuild), --print-path (print where the binary goes, and exit).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/go-tool.sh
source "$here/../lib/go-tool.sh"
go_tool_init openfaas
go_tool_parse_args --print-path 2,27 "$@"
go_tool_use_env_binary OPENFAAS_RENDER

go_tool_from_archive openfaas-ce-src.tar.xz openfaas-ce sdewan-openfaas-render \
  "the OpenFaaS CE renderer cannot be built here; its tests skip with this reason. Point OPENFAAS_RENDER at a built renderer to run them."
bin="$tool_result"

# The renderer's sources as last built: a change to them rebuilds it.
render_src="$here/render"
stamp="$out_dir/render.sha256"
sources_sum() { cat "$render_src/handlers_sdewan.go" "$render_src/main.go" | sha256sum | cut -c1-64; }
up_to_date() { go_tool_have "$bin" && [[ -f "$stamp" && "$(cat "$stamp")" == "$(sources_sum)" ]]; }
go_tool_cached_or_lock "$out_dir" "$bin" go_tool_archive_unavailable \
  "install Go 1.26 or newer (faas-netes's go.mod), or set OPENFAAS_RENDER" -mod=vendor up_to_date
rm -f "$out_dir/UNAVAILABLE"

src="$out_dir/src"
mod="$src/faas-netes"
log "faas-netes $commit: unpacking $tools_archive"
rm -rf "$src" && mkdir -p "$src"
tar -xJf "$tools_archive" -C "$src" faas-netes
sum="$(sources_sum)"
cp "$render_src/handlers_sdewan.go" "$mod/pkg/handlers/zz_sdewan_render.go"
mkdir -p "$mod/cmd/sdewan-openfaas-render"
cp "$render_src/main.go" "$mod/cmd/sdewan-openfaas-render/main.go"

total="$(go_tool_count_deps "$mod" ./cmd/sdewan-openfaas-render)"
log "compiling up to $total packages ($(go_tool_elapsed) elapsed)"
still_compiling() { log "still compiling ($(go_tool_elapsed) elapsed)"; }
if ! go_tool_build "$mod" ./cmd/sdewan-openfaas-render "$bin" "-s -w" still_compiling; then
  log "go build failed. To see why: cd $mod && GOFLAGS=-mod=vendor GOTOOLCHAIN=local go build ./cmd/sdewan-openfaas-render"
  exit 1
fi
printf '%s\n' "$sum" >"$stamp"
rm -rf "$src"
log "built $bin in $(go_tool_elapsed)"
echo "$bin"
