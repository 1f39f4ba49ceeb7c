/**
 * shared/clusterlink: ClusterLink's control plane (reference B) as stateless reconcilers: Exports
 * checked against their Services, Imports given a leased port and their Services, Peers
 * heartbeaten, access decided from the live policies. One entry per function (on-*.ts):
 * syncExportEvent, syncImportEvent, syncPeerEvent, decideAccessRequest, each with its pure scope
 * planner (plan-<kind>-scope.ts); the API only through the ClusterLinkStore (store.ts,
 * kube-store.ts); pure plan-*.ts; I/O in apply-import*.ts, lease-by-port.ts and heartbeat.ts.
 * Schemas and CRDs: shared/kinds/clusterlink.ts.
 * Does not: keep leases in memory (ADR 0006), speak HTTP, or program a dataplane.
 * Each module's part: docs/code-notes.md (clusterlink); the functions: docs/clusterlink.md.
 */
export * from "../kinds/clusterlink.js";
export * from "./names.js";
export * from "./observed.js";
export * from "./plan-status.js";
export * from "./plan-export.js";
export * from "./on-export-event.js";
export * from "./plan-lease.js";
export * from "./plan-import.js";
export * from "./plan-merge.js";
export * from "./plan-events.js";
export * from "./on-import-event.js";
export * from "./plan-access.js";
export * from "./plan-authz.js";
export * from "./plan-policy-status.js";
export * from "./on-access-request.js";
export * from "./plan-peer-health.js";
export * from "./heartbeat.js";
export * from "./on-peer-event.js";
