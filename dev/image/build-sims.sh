#!/usr/bin/env bash
# Builds the test doubles' image, for running them as Pods on a real node (test/node/fixtures):
# the CNF simulator (dev/cnf-sim) and the peer gateway simulator (dev/peer-gateway-sim), each
# bundled by esbuild into one file under /sims, on the same stand-in base as the product image
# (dev/image/base.sh), as user 1000:1000. No Dockerfile: buildah from the base, copy, config.
#
#   dev/image/build-sims.sh [--check] <archive.tar>
#
# Writes a docker archive of docker.io/library/sdewan-sims:latest to <archive.tar>, for
# `crane push <archive.tar> <registry>/library/sdewan-sims:latest` (the fixtures pull it, as the
# product's manifests do: test/node/fixtures/README.md) or `ctr images import`. Entries:
#   node /sims/cnf-sim.mjs --host 0.0.0.0 --port 80            (CNF_SIM_PASSWORD from a Secret)
#   node /sims/peer-gateway-sim.mjs --tls-dir <dir> --port 8443 --host 0.0.0.0 east west
#
# Cached by a content hash of its inputs: the two bundles (so every source file they take in,
# and the locked dependencies' code), this script, base.sh and the pinned Node version. The hash
# is the image's label org.sdewan.sims.inputs and the cached file's name
# (${XDG_CACHE_HOME:-~/.cache}/sdewan-functions/image-sims/<hash>.tar; only the newest is kept).
# A hit copies the archive and needs neither root nor buildah; a miss needs root (buildah).
#
# --check: runs each entry from the built image as a Pod would (podman, read-only root, uid
# 1000, no capabilities) and asks it what the node tests ask: the CNF simulator's front page and a
# login, the peer gateway's control listener and a heartbeat over mutual TLS. Needs root.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
check=0
out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --check) check=1; shift ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build-sims.sh: unknown option: $1" >&2; exit 2 ;;
    *) [[ -z $out ]] || { echo "build-sims.sh: one archive path, not '$out' and '$1'" >&2; exit 2; }
       out="$1"; shift ;;
  esac
done
if [[ -z $out ]]; then echo "usage: dev/image/build-sims.sh [--check] <archive.tar>" >&2; exit 2; fi
mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"

log() { printf '[sims] %s\n' "$*" >&2; }
now() { date +%s.%N; }
since() { printf '%.1f' "$(echo "$(now) - $1" | bc)"; }

# shellcheck source=base.sh
source "$repo/dev/image/base.sh"
image_base_init
image="docker.io/library/sdewan-sims:latest"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/sdewan-functions/image-sims"
started=$(now)

work="$(mktemp -d -t sdewan-sims.XXXXXX)"
store=(--root "$work/storage" --runroot "$work/run" --storage-driver overlay)
cleanup() {
  set +e
  if [[ -d $work/storage ]]; then
    podman "${store[@]}" rm -af >/dev/null 2>&1
    buildah "${store[@]}" rm --all >/dev/null 2>&1
    buildah "${store[@]}" rmi --all -f >/dev/null 2>&1
    umount "$work/storage/overlay" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# --- the bundles, and the hash of everything the image is made of --------------------------------
# From the repository root, so the bundles' path comments are the same in every clone.
(cd "$repo" && node_modules/.bin/esbuild dev/cnf-sim/main.ts dev/peer-gateway-sim/main.ts \
  --bundle --platform=node --format=esm --target=node24 --outbase=dev --entry-names='[dir]' \
  --out-extension:.js=.mjs --outdir="$work/sims" --log-level=warning \
  --banner:js="import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);")
hash="$( (cd "$work/sims" && sha256sum cnf-sim.mjs peer-gateway-sim.mjs
  cd "$repo/dev/image" && sha256sum build-sims.sh base.sh
  echo "node $node_version") | sha256sum | cut -c1-16)"
cached="$cache/$hash.tar"

# --- the image: from the cache, or built -----------------------------------------------------------
if [[ -f $cached ]]; then
  log "image $hash from $cache"
else
  if [[ $(id -u) != 0 ]]; then log "not cached: building needs root (buildah)"; exit 1; fi
  image_require_packages buildah
  image_base_load
  t=$(now)
  ctr=$(buildah "${store[@]}" from "$base")
  buildah "${store[@]}" copy --chown 0:0 --chmod 0644 "$ctr" \
    "$work/sims/cnf-sim.mjs" "$work/sims/peer-gateway-sim.mjs" /sims/ >/dev/null
  buildah "${store[@]}" config --user 1000:1000 --workingdir /sims --env NODE_ENV=production \
    --label "org.sdewan.sims.inputs=$hash" --cmd '["node", "/sims/cnf-sim.mjs"]' "$ctr"
  buildah "${store[@]}" commit -q --rm "$ctr" "$image" >/dev/null
  mkdir -p "$cache"
  rm -f "$cache"/*.tar "$cache"/*.partial
  buildah "${store[@]}" push -q "$image" "docker-archive:$cached.partial:$image"
  mv "$cached.partial" "$cached"
  log "image $hash built in $(since "$t") s, cached in $cache"
fi
cp "$cached" "$out.partial"
mv "$out.partial" "$out"
log "wrote $out ($image, $(($(stat -c %s "$out") / 1000000)) MB) in $(since "$started") s"
[[ $check == 1 ]] || exit 0

# --- --check: each entry run as its Pod runs it ----------------------------------------------------
if [[ $(id -u) != 0 ]]; then log "--check needs root (podman)"; exit 1; fi
image_require_packages podman runc
podman "${store[@]}" load -q -i "$out" >/dev/null
failures=0
fail() { log "FAIL: $*"; failures=$((failures + 1)); }
run=(podman "${store[@]}" --runtime runc run -d --network host --read-only --read-only-tmpfs=false
  --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges
  --ulimit nofile=20000:20000 --ulimit nproc=4096:4096)
wait_for() { # wait_for <what> <command...>: polls the command, 20 s at most
  local deadline=$(($(date +%s) + 20))
  until "${@:2}" >/dev/null 2>&1; do
    [[ $(date +%s) -lt $deadline ]] || { fail "$1 not answering after 20 s"; return 1; }
    sleep 0.2 # polling a port the container opens; the deadline above bounds it
  done
}
code() { curl -s -o /dev/null -w '%{http_code}' "$@" || true; }

# The CNF simulator (a high port: host networking here; the Pod listens on 80).
"${run[@]}" --name cnf -e CNF_SIM_PASSWORD=check-password "$image" \
  node /sims/cnf-sim.mjs --host 127.0.0.1 --port 18981 >/dev/null
if wait_for "cnf-sim" curl -sf http://127.0.0.1:18981/; then
  login=$(code -X POST --data 'luci_username=root&luci_password=check-password' \
    http://127.0.0.1:18981/cgi-bin/luci/)
  [[ $login == 302 ]] || fail "cnf-sim login answered $login, not 302"
  [[ $(podman "${store[@]}" exec cnf id -u) == 1000 ]] || fail "cnf-sim is not uid 1000"
  log "cnf-sim: GET / 200, login $login"
fi

# The peer gateway simulator, from a fabric written on the host (openssl), mounted read-only.
(cd "$repo" && node_modules/.bin/node --import tsx dev/peer-gateway-sim/main.ts --fabric-only \
  --dir "$work/fabric" east west) >/dev/null
chmod -R a+rX "$work/fabric" # as a Secret volume's files (0644), which uid 1000 reads
"${run[@]}" --name peers -v "$work/fabric/gateway:/etc/peer-gateway-sim/tls:ro" "$image" \
  node /sims/peer-gateway-sim.mjs --tls-dir /etc/peer-gateway-sim/tls --host 127.0.0.1 \
  --port 18943 --control-port 18982 --label east:region=eu-east east west=silent >/dev/null
if wait_for "peer-gateway-sim" curl -sf http://127.0.0.1:18982/_sim/gateways; then
  id="$work/fabric/identity"
  beat=$(code --max-time 5 --cacert "$id/ca.crt" --cert "$id/tls.crt" --key "$id/tls.key" \
    --resolve east:18943:127.0.0.1 https://east:18943/healthz)
  [[ $beat == 200 ]] || fail "peer east's heartbeat answered $beat, not 200"
  log "peer-gateway-sim: control 200, east's heartbeat $beat"
fi
if [[ $failures -gt 0 ]]; then
  for c in cnf peers; do podman "${store[@]}" logs "$c" 2>&1 | tail -10 >&2; done
  log "FAIL ($failures) after $(since "$started") s"
  exit 1
fi
log "PASS in $(since "$started") s"
