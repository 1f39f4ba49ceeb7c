#!/usr/bin/env bash
# Builds Knative Eventing's core commands, the ones its install YAMLs (config/) name as ko://
# images, from the vendored sources in the shared tools folder (knative-eventing-src.tar.xz,
# unpacking to knative-eventing/), offline with the machine's Go (GOTOOLCHAIN=local, -mod=vendor),
# cached outside git and keyed by the upstream commit the archive holds:
#
#   ${XDG_CACHE_HOME:-~/.cache}/sdewan-functions/knative-eventing-core-<commit, 12 hex>/
#     bin/<command>        controller, webhook, broker-ingress, broker-filter, mtchannel_broker,
#                          imc-controller, imc-dispatcher, apiserver_receive_adapter, mtping,
#                          jobsink, requestreply, auth_proxy (config/core names these too),
#                          event_display (the dead-letter sink of manifests/knative-deployments)
#     knative-eventing/    the unpacked sources (config/ is Knative's install, ko:// images)
#
# dev/node/knative.ts turns each binary into a FROM-scratch image for the real node and applies
# config/ with the ko:// references replaced. Cold: ~2-4 min on two busy cores, ~1.3 GB of Go
# build cache; cached: instant. Prints the cache directory as the last line of stdout; progress on
# stderr. No Go or no archive: outside CI, records why in <cache dir>/UNAVAILABLE and exits 0
# (the tests skip with that reason); in CI that fails.
#
# Options: --force (rebuild), --print-path (print the cache directory, and exit).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/go-tool.sh
source "$here/../lib/go-tool.sh"
go_tool_init knative-eventing
go_tool_parse_args --print-path 2,19 "$@"

# <binary name>:<package>, the ko:// import paths config/ names (knative.dev/eventing/<package>),
# and the sink the Deployments variant's dead letter runs.
commands=(
  controller:./cmd/controller
  webhook:./cmd/webhook
  broker-ingress:./cmd/broker/ingress
  broker-filter:./cmd/broker/filter
  imc-controller:./cmd/in_memory/channel_controller
  imc-dispatcher:./cmd/in_memory/channel_dispatcher
  apiserver_receive_adapter:./cmd/apiserver_receive_adapter
  mtping:./cmd/mtping
  mtchannel_broker:./cmd/mtchannel_broker
  jobsink:./cmd/jobsink
  requestreply:./cmd/requestreply
  auth_proxy:./cmd/auth_proxy
  event_display:./cmd/event_display
)

go_tool_from_archive knative-eventing-src.tar.xz knative-eventing-core "" \
  "Knative Eventing's core cannot be built here; the tests that install it skip with this reason."

binaries=()
for entry in "${commands[@]}"; do binaries+=("$out_dir/bin/${entry%%:*}"); done
export GOPROXY=off
go_tool_cached_or_lock "$out_dir" "$out_dir" go_tool_fail \
  "install Go 1.25 or newer, or set GO to a Go binary" -mod=vendor go_tool_have "${binaries[@]}"
rm -f "$out_dir/UNAVAILABLE"

src="$out_dir/knative-eventing"
if [[ $force == 1 || ! -f "$src/go.mod" ]]; then
  log "knative eventing $commit: unpacking $tools_archive"
  go_tool_unpack "$tools_archive" "$out_dir"
fi
mkdir -p "$out_dir/bin"
for entry in "${commands[@]}"; do
  name="${entry%%:*}"
  if [[ $force == 1 ]] || ! go_tool_have "$out_dir/bin/$name"; then
    go_tool_build_step "$name" "$src" "${entry#*:}" "$out_dir/bin/$name" "-s -w"
  fi
done
log "built in $(go_tool_elapsed): $out_dir"
echo "$out_dir"
