#!/usr/bin/env bash
# Builds the project's Dockerfile, unmodified, for one function and runs the image as the
# manifests run it (read-only root, uid 1000, no capabilities, no new privileges), without a
# Docker engine or a container registry: buildah and podman (Debian packages; installed when
# missing, as .ci/run installs prometheus), runc, and a stand-in for the base image
# node:24.21.0-bookworm-slim, which cannot be pulled here (see "base image" below).
#
# Checks, each a failure when it does not hold:
#   - GET /_/health and /_/ready answer 200 (first health 200 timed from `podman run`);
#   - the Dockerfile's HEALTHCHECK command exits 0; the server runs as uid 1000;
#   - a malformed CloudEvent is answered 400 (intake refuses it; the server stays up);
#   - with a cluster (--with-cluster starts the local control plane, `npm run cluster:up`; or
#     --kubeconfig FILE): Knative's event for a rule the cluster does not hold is answered 202
#     (done, gone): the bundle reaches the API server with its production dependencies only;
#   - Node's compile cache, filled at build time, is read when the server starts as uid 1000:
#     NODE_DEBUG_NATIVE=COMPILE_CACHE reports cache hits and no "Cannot create cache directory".
#
# Base image: a Debian bookworm minbase root file system plus Node 24.21.0, npm 11.19.0, the `node`
# user 1000:1000 and an entrypoint like the official image's, built once and cached
# (dev/image/base.sh, which dev/image/build-sims.sh shares).
#
# This machine kind's quirks (measured): crun refuses the hybrid cgroup layout (runc; builds with
# --isolation chroot); podman's default rlimits are refused (explicit --ulimit); no systemd
# (--health-interval disable, the HEALTHCHECK run by hand); npm inside the build must trust the
# host's CA bundle: mounted read-only over /usr/local/etc (npm's global config folder), so nothing
# is baked into the image.
#
# Needs root. Usage: dev/image/test.sh [--function NAME] [--with-cluster | --kubeconfig FILE] [--keep]
# Everything but the cached base lives in a temporary folder, removed at exit unless --keep.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
function_name=reconcile-rule
kubeconfig=""
with_cluster=0
keep=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --function) function_name="$2"; shift 2 ;;
    --kubeconfig) kubeconfig="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
    --with-cluster) with_cluster=1; shift ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done

log() { printf '[image] %s\n' "$*" >&2; }
now() { date +%s.%N; }
since() { printf '%.1f' "$(echo "$(now) - $1" | bc)"; }

if [[ $(id -u) != 0 ]]; then log "needs root (buildah and podman as root)"; exit 1; fi

# shellcheck source=base.sh
source "$repo/dev/image/base.sh"
image_base_init
tag="localhost/sdewan-functions/${function_name}:test"
port="${PORT:-18990}"

started=$(now)
image_require_packages buildah podman runc mmdebstrap

work="$(mktemp -d -t sdewan-image.XXXXXX)"
store=(--root "$work/storage" --runroot "$work/run" --storage-driver overlay)
run=(podman "${store[@]}" --runtime runc run --network host --health-interval disable
  --ulimit nofile=20000:20000 --ulimit nproc=4096:4096)
cluster_pid=""
cleanup() {
  set +e
  if [[ -n $cluster_pid ]]; then kill "$cluster_pid" 2>/dev/null; wait "$cluster_pid" 2>/dev/null; fi
  podman "${store[@]}" rm -af >/dev/null 2>&1
  buildah "${store[@]}" rm --all >/dev/null 2>&1
  if [[ $keep == 1 ]]; then log "kept $work"; return; fi
  buildah "${store[@]}" rmi --all -f >/dev/null 2>&1
  umount "$work/storage/overlay" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# --- the stand-in base image (cached; dev/image/base.sh) -----------------------------------------
image_base_load

# --- the local control plane, started now so it is up when the image is built ---------------------
if [[ $with_cluster == 1 ]]; then
  if [[ -e $repo/.cluster/pid ]] && kill -0 "$(cat "$repo/.cluster/pid")" 2>/dev/null; then
    log "a cluster from npm run cluster:up is running: pass --kubeconfig $repo/.cluster/kubeconfig"
    exit 1
  fi
  # exec: $! is the control plane's own process, which stops it on SIGTERM (cleanup).
  (cd "$repo" && exec "$repo/node_modules/.bin/node" --import tsx dev/control-plane/cli.ts up) \
    >"$work/cluster.log" 2>&1 &
  cluster_pid=$!
  kubeconfig="$repo/.cluster/kubeconfig"
fi

# --- build the unmodified Dockerfile -------------------------------------------------------------
t=$(now)
image_build "$tag" "$function_name"
size=$(podman "${store[@]}" image inspect "$tag" --format '{{.Size}}')
log "built $tag in $(since "$t") s: $((size / 1000000)) MB"

# --- run it as the manifests do ----------------------------------------------------------------
failures=0
fail() { log "FAIL: $*"; failures=$((failures + 1)); }
status_of() { curl -s -o /dev/null -w '%{http_code}' "$@" || true; }

if [[ $with_cluster == 1 ]]; then
  deadline=$(($(date +%s) + 120))
  until [[ -s $kubeconfig ]] || [[ $(date +%s) -ge $deadline ]] || ! kill -0 "$cluster_pid" 2>/dev/null; do
    sleep 0.2 # polling for the control plane's kubeconfig; the deadline above bounds it
  done
  if [[ ! -s $kubeconfig ]]; then tail -20 "$work/cluster.log" >&2; log "FAIL: no control plane"; exit 1; fi
fi
mounts=()
env_args=(-e "PORT=$port" -e NODE_DEBUG_NATIVE=COMPILE_CACHE)
if [[ -n $kubeconfig ]]; then
  # A copy uid 1000 may read (cluster:up writes it 0600 for root), in the private work folder.
  install -m 0644 "$kubeconfig" "$work/kubeconfig"
  mounts=(-v "$work/kubeconfig:/etc/sdewan/kubeconfig:ro")
  env_args+=(-e KUBECONFIG=/etc/sdewan/kubeconfig)
fi
t=$(now)
# (podman logs, without systemd, that it cannot schedule health checks: kept out of the way.)
"${run[@]}" -d --name fn --read-only --read-only-tmpfs=false --user 1000:1000 --cap-drop ALL \
  --security-opt no-new-privileges "${env_args[@]}" "${mounts[@]}" "$tag" >/dev/null 2>"$work/run.err" ||
  { cat "$work/run.err" >&2; log "FAIL: podman run"; exit 1; }
health=000
deadline=$(($(date +%s) + 30))
while [[ $(date +%s) -lt $deadline ]]; do
  health=$(status_of "http://127.0.0.1:$port/_/health")
  [[ $health == 200 ]] && break
  if [[ $(podman "${store[@]}" inspect fn --format '{{.State.Running}}') != true ]]; then break; fi
  sleep 0.05 # polling the server's port; the deadline above bounds it
done
if [[ $health == 200 ]]; then log "/_/health 200 $(since "$t") s after podman run"; else fail "/_/health $health"; fi
[[ $(status_of "http://127.0.0.1:$port/_/ready") == 200 ]] || fail "/_/ready is not 200"
podman "${store[@]}" healthcheck run fn >/dev/null 2>&1 || fail "the HEALTHCHECK command failed"
[[ $(podman "${store[@]}" exec fn id -u) == 1000 ]] || fail "the server is not uid 1000"

malformed=$(status_of -X POST "http://127.0.0.1:$port/$function_name" \
  -H 'content-type: application/json' -H 'ce-specversion: 1.0' -H 'ce-id: image-test-1' \
  -H 'ce-source: /image-test' --data '{"not":"an event"}')
[[ $malformed == 400 ]] || fail "a malformed CloudEvent was answered $malformed, not 400"
log "malformed CloudEvent: $malformed"

if [[ -n $kubeconfig ]]; then
  # Knative's ApiServerSource event for the demo's http-rule (test/fixtures/events), which this
  # cluster does not hold: reconcile-rule reads it through the API server and is done (gone).
  reply="$work/reply.txt"
  fixture="$repo/test/fixtures/events/binary-ref-update"
  ok=$(curl -s -D "$reply" -o /dev/null -w '%{http_code}' -X POST \
    "http://127.0.0.1:$port/$function_name" -H "@$fixture.headers" --data-binary "@$fixture.json" || true)
  [[ $ok == 202 ]] || fail "the fixture CloudEvent was answered $ok: $(tr -d '\r' <"$reply" | grep -i '^x-sdewan')"
  log "CloudEvent through the API server: $ok $(tr -d '\r' <"$reply" | grep -i '^x-sdewan-reason' || true)"
fi
[[ $(status_of "http://127.0.0.1:$port/_/health") == 200 ]] || fail "not healthy after the events"

logs="$(podman "${store[@]}" logs fn 2>&1)"
# A hit: "reading cache from <dir> for ESM <file>...[...]... success, size=<n>". A miss says why
# (no such file: never cached; permission denied: cached by or for another user).
hits=$(grep -c '^\[compile cache\] reading cache from .*success, size=' <<<"$logs" || true)
if grep -q 'Cannot create cache directory' <<<"$logs"; then
  fail "the compile cache cannot be used by uid 1000: $(grep -m1 'Cannot create cache directory' <<<"$logs")"
elif grep -q '^\[compile cache\] reading cache from .*permission denied' <<<"$logs"; then
  fail "uid 1000 may not read the compile cache: $(grep -m1 'permission denied' <<<"$logs")"
elif [[ $hits == 0 ]]; then
  fail "no compile cache hit at start: $(grep -m3 '^\[compile cache\] reading' <<<"$logs" | tr '\n' ' ')"
fi
log "compile cache hits at start: $hits"
if [[ $failures -gt 0 ]]; then
  podman "${store[@]}" logs fn 2>&1 | grep -v '^\[compile cache\]' | tail -20 >&2
  log "FAIL ($failures) after $(since "$started") s"
  exit 1
fi
log "PASS in $(since "$started") s"
