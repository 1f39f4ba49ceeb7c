/**
 * shared/egress: Antrea Egress membership (EgressGroups), computed from live state on every event.
 * Entry: syncEgressEvent (on-event.ts); membership as antrea-controller computes it
 * (membership.ts), pure plans (plan-scope.ts, plan-group.ts, plan-events.ts), the size budget
 * (size.ts); reads and writes through an EgressStore (apply-event.ts, kube-store.ts).
 * Does not: speak HTTP, keep state between events, or pick a Pod's effective Egress (Antrea's
 * agent does). Each module's part: docs/code-notes.md (egress); docs/egress.md.
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
