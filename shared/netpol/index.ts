/**
 * shared/netpol: Kubernetes NetworkPolicy compiled into per-endpoint tables from live state on
 * every event (docs/netpol.md; table shape: ADR 0005), and the node agent's sync into nftables.
 * Entry: syncNetpolEvent (on-event.ts); pure compiler (plan-tables.ts, compile.ts) and datapath
 * (decide.ts); reads and writes through a store (store.ts, kube-store.ts). Schemas and CRDs:
 * shared/kinds/netpol.ts. Does not: keep state between events, write NetworkPolicy status,
 * or handle IPv6. Each module's part: docs/code-notes.md (netpol).
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
