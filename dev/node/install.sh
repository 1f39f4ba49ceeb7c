#!/usr/bin/env bash
# Installs the Debian packages a real node needs when any is missing: containerd (1.6), runc, the
# CNI plugins, iptables and conntrack (kube-proxy), socat (the host's relay to the API server),
# buildah (images), gcc (the pause image). Quiet unless it fails. Needs root.
set -euo pipefail
packages=(containerd runc containernetworking-plugins iptables conntrack socat buildah gcc libc6-dev curl)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[[ ${#missing[@]} == 0 ]] && exit 0
echo "[node] installing Debian packages: ${missing[*]}" >&2
log="$(mktemp)"
# policy-rc.d keeps packages from starting their services (the node starts its own containerd).
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2; echo "[node] installing ${missing[*]} failed" >&2; exit 1
fi
rm -f "$log"
