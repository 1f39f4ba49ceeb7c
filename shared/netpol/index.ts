/**
 * shared/netpol: Kubernetes NetworkPolicy compiled into per-endpoint enforcement tables, from live
 * state on every event (issue 15; docs/netpol.md; table shape: docs/adr/0005-netpol-table-shape.md).
 *
 * Owns: parsing NetworkPolicies, Pods and Namespaces at the boundary with the API server's
 * defaults (observed.ts); the pure compiler to NetworkPolicyEndpoint and NetworkPolicyPeerSet
 * contents with the standard semantics, bit splitting and the 64-bit fail-closed limit
 * (plan-tables.ts, compile.ts), each peer set bounded to what the API server stores
 * (peer-set-bound.ts); IPv4 CIDR arithmetic (ipv4.ts); the datapath as a pure function
 * over the stored tables only (decide.ts). Label selectors are shared/core's; the table schemas
 * and CRDs are shared/rules' (netpol-kinds.ts).
 *
 * Does not: load anything into a datapath, keep state between events, write NetworkPolicy
 * status, or handle IPv6 (an IPv6 CIDR never matches the IPv4 packets the tables decide).
 *
 * Example:
 *   const { endpoints, peerSets } = compileObjects({ policies, pods, namespaces });
 *   decide(tables, { namespace: "web", pod: "api-0", direction: "ingress",
 *                    peerIP: "10.1.0.7", protocol: "TCP", port: 8080 });  // { allow, rules }
 */
export * from "./ipv4.js";
export * from "./observed.js";
export * from "./plan-tables.js";
export * from "./compile.js";
export * from "./decide.js";
export * from "./table-objects.js";
export * from "./peer-set-bound.js";
export * from "./plan-scope.js";
export * from "./member-index.js";
export * from "./plan-pod-event.js";
export * from "./plan-events.js";
export * from "./store.js";
export * from "./apply-event.js";
export * from "./apply-pod-event.js";
export * from "./kube-store.js";
export * from "./on-event.js";
export * from "./plan-node-enforcement.js";
export * from "./plan-nft-ruleset.js";
export * from "./plan-agent-hint.js";
export * from "./agent-store.js";
export * from "./agent-sync.js";
export * from "./agent-loop.js";
export * from "./nft.js";
