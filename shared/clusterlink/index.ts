/**
 * shared/clusterlink: ClusterLink's control plane (reference B) as stateless reconcilers over
 * the API server: Exports verified against their Services, Imports given a leased target port
 * and their system and user Services, access decisions from the live policies.
 *
 * Owns: names and labels of what an Import creates (names.ts); parsing Exports and Imports at
 * the boundary (observed.ts); the pure plans: status with upstream's condition strings plus
 * Ready/Reconciling/Stalled (plan-status.ts), Export validity (plan-export.ts), port leases
 * derived from the Imports' spec.targetPort (plan-lease.ts), an Import's Services
 * (plan-import.ts), access decisions (plan-access.ts) for the Peer a verified certificate names
 * and what must exist first (plan-authz.ts), a policy's PolicyValid (plan-policy-status.ts), a
 * Peer's reachability from one
 * heartbeat with upstream's thresholds kept in status (plan-peer-health.ts); the I/O shells: one Import's writes
 * (apply-import.ts), leases asked per port (lease-by-port.ts), the mTLS heartbeat
 * (heartbeat.ts); one entry per function: syncExportEvent, syncImportEvent, syncPeerEvent,
 * decideAccessRequest.
 *
 * Does not: keep leases or back-references in memory (docs/adr/0006), speak HTTP, program a
 * dataplane, or import another capability. The CRD schemas live in shared/rules
 * (clusterlink-kinds.ts) because the CRD generator builds from there.
 *
 * Example:
 *   const outcome = await syncImportEvent(event, kube, log, { now, clNamespace });
 *   const plan = planExport(observeExport(object), service); // plan.conditions, plan.verdict
 *   const decision = decideAccess(policies, { source, destination, namespace });
 */
export * from "../rules/clusterlink-kinds.js";
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
export * from "./authz.js";
export * from "./plan-peer-health.js";
export * from "./heartbeat.js";
export * from "./on-peer-event.js";
