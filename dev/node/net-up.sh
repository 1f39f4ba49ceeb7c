#!/usr/bin/env bash
# The node's network: a network namespace of its own, so kube-proxy's rules, the pod bridge and
# the pods' veths never touch the host's interfaces, routes or iptables. No default route: pods
# (100.64.0.0/24), Services (100.65.0.0/16) and the node (100.66.0.1) are reachable only inside.
# Usage: net-up.sh <netns> <bridge>. Fails if the namespace exists (teardown.sh removes it).
set -euo pipefail
netns="$1" bridge="$2"
ip netns add "$netns"
ip -n "$netns" link set lo up
# No dummy link driver in this kernel: the node's address lives on the namespace's loopback.
ip -n "$netns" addr add 100.66.0.1/32 dev lo
# The pod bridge is made here (CNI's bridge plugin adopts it) so the node has a route to the
# Service range: without one, a connect() to a ClusterIP from the node fails before kube-proxy's
# OUTPUT rules can rewrite it (the API server calling a webhook Service, for one).
ip -n "$netns" link add "$bridge" type bridge
ip -n "$netns" addr add 100.64.0.1/24 dev "$bridge"
ip -n "$netns" link set "$bridge" up
ip -n "$netns" route add 100.65.0.0/16 dev "$bridge" src 100.64.0.1
ip netns exec "$netns" sysctl -q -w net.ipv4.ip_forward=1
# br_netfilter is what makes kube-proxy's rules see bridged pod-to-pod traffic (hairpin included).
modprobe br_netfilter 2>/dev/null || true
ip netns exec "$netns" sysctl -q -w net.bridge.bridge-nf-call-iptables=1
