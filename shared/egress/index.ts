/**
 * shared/egress: Antrea Egress membership, computed from live state on every event.
 *
 * Owns: Egress membership exactly as antrea-controller computes it (membership.ts, with a per-event
 * PodIndex so many groups share one pass over the Pods); the size budget of one
 * group (size.ts); the pure plans: which groups an event touches and which list requests observe
 * them (plan-scope.ts), and the desired EgressGroup plus create/update/unchanged/delete
 * (plan-group.ts), and which write is worth a `MembersChanged` Event (plan-events.ts); parsing Pods, Namespaces and Egresses at the boundary (observed.ts) and the
 * EgressGroup object (group-object.ts); the observe-plan-write shell over an EgressStore
 * interface (apply-event.ts), the store over shared/kube (kube-store.ts), and one event from
 * intake to Outcome with its race retries (on-event.ts). Label selectors are shared/core's.
 *
 * Does not: speak HTTP, keep any state between events, or pick a Pod's effective Egress
 * (Antrea's agent does that; a Pod selected by two Egresses is listed in both groups).
 *
 * Example:
 *   const outcome = await syncEgressEvent(event, kube, log, { now });
 *   const plan = planEgressGroup({ name: egress.name, egress, pods, namespaces, existing, now });
 */
export * from "./membership.js";
export * from "./pod-index.js";
export * from "./observed.js";
export * from "./size.js";
export * from "./plan-group.js";
export * from "./plan-scope.js";
export * from "./plan-events.js";
export * from "./member-index.js";
export * from "./group-object.js";
export * from "./apply-event.js";
export * from "./kube-store.js";
export * from "./on-event.js";
