#!/usr/bin/env bash
# Removes everything a node left on the host once its daemons are stopped (or died): container
# processes (by their cgroups), containerd shims, mounts, pod network namespaces, the node's
# namespace, state folders and empty cgroups. Safe to rerun; run by the node's stop() and by the
# reaper when the process that owned the node died. Usage: teardown.sh <netns> <state-dir> <run-dir>
set -uo pipefail
netns="$1" state="$2" run="$3"

# 1. Every process still in a pod's cgroup (the kubelet's "kubepods" tree, containerd's "k8s.io").
for hierarchy in /sys/fs/cgroup/*/; do
  for top in kubepods k8s.io; do
    [[ -d $hierarchy$top ]] || continue
    find "$hierarchy$top" -name tasks -exec cat {} + 2>/dev/null | sort -u | xargs -r kill -9 2>/dev/null
  done
done
# 2. Shims of our containerd (each names our socket in its command line).
pkill -9 -f "containerd-shim-runc-v2 .*-address $run/containerd/containerd.sock" 2>/dev/null
# 3. Mounts under our folders (the kubelet's volumes, containerd's rootfs), deepest first.
awk -v s="$state" -v r="$run" '$2 ~ "^(" s "|" r ")" { print $2 }' /proc/mounts |
  sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
# 4. The pods' namespaces (cni-*, made by containerd): ours are those whose eth0's peer is in the
# node's namespace (another runtime's, e.g. podman's, is not touched). Then the node's namespace,
# and pod namespaces left empty by an earlier crash (their veth went with the node's namespace).
for n in $(ip netns list | awk '/^cni-/ { print $1 }'); do
  ip -n "$n" link show 2>/dev/null | grep -q "link-netns $netns\b" && ip netns del "$n"
done
ip netns del "$netns" 2>/dev/null
for n in $(ip netns list | awk '/^cni-/ { print $1 }'); do
  [[ $(ip -n "$n" -o link show 2>/dev/null | wc -l) == 1 ]] && ip netns del "$n"
done
# 5. State on disk, and cgroups left empty. The kubelet hardcodes /var/lib/kubelet/device-plugins
# (kept when another kubelet's files are there). The 1.6 shim keeps sockets in /run/containerd.
rm -rf "$state" "$run"
rm -rf /var/lib/kubelet/device-plugins/kubelet.sock /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint
rmdir /var/lib/kubelet/device-plugins /var/lib/kubelet 2>/dev/null
[[ -S /run/containerd/containerd.sock ]] || rm -rf /run/containerd/s /run/containerd/io.containerd.runtime.v2.task
rmdir /run/containerd 2>/dev/null
for hierarchy in /sys/fs/cgroup/*/; do
  for top in kubepods k8s.io; do
    [[ -d $hierarchy$top ]] && find "$hierarchy$top" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
done
left_mounts=$(awk -v s="$state" -v r="$run" '$2 ~ "^(" s "|" r ")"' /proc/mounts | wc -l)
left_cgroups=$(ls -d /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/*/k8s.io 2>/dev/null | wc -l)
left_netns=$(ip netns list | grep -c "^$netns\b")
echo "teardown: left $left_mounts mounts, $left_cgroups cgroup folders, $left_netns node namespaces"
