/**
 * The closed vocabulary of handler outcomes and the one table that maps each to an HTTP reply
 * and a status condition. Handlers never throw for expected failures: they return an Outcome.
 * An unexpected exception is not an Outcome: the runtime answers 500 with an error id and logs
 * the stack; the delivery layer (Knative, the connector) redelivers a 5xx as it would a 503.
 */

/**
 * Every code a malformed or permanent outcome carries, with what it means: the catalogue. A code
 * is PascalCase, like the condition reason it is written as; a new case is added here, so a second
 * spelling of an existing one fails the type check (test/unit/core/outcome-codes.test.ts).
 */
export const OUTCOME_CODES = {
  // The event (malformed), or a rule of a kind the registry does not know (permanent).
  UnknownKind: "the event names a kind this function does not handle",
  MissingNamespace: "the event names a namespaced object without its namespace",
  MissingName: "the event names an object without its name",
  WrongFunction: "the event belongs to another function (a resync sent to reconcile-rule)",
  BadResyncScope: "the resync event's scope is not one this function can cover",
  // Any capability: the API server's answer (shared/kube/failure-outcome.ts) or a bug.
  Rejected: "the API server refused the request for good (400, 422, another 4xx)",
  InternalError: "handling the object failed in a way no redelivery fixes (a bug); logged",
  // Rules (shared/sync, shared/kinds).
  InvalidSpec: "the object's spec does not match its kind's schema",
  MissingPurpose: "a rule without the sdewanPurpose label naming its CNF",
  NetworkNotMapped: "a rule names a network the CNF Deployment does not map",
  InvalidNetworkAnnotation: "the CNF Deployment's nfn-network annotation is not ovn4nfv's shape",
  NameCollision: "two rules map to one CNF object",
  MultipleCNFs: "more than one CNF Deployment for one purpose in a namespace",
  CNFRejected: "the CNF refused the rule as invalid",
  InUseByUndeclaredObject: "a CNF object no rule declares still uses the rule being deleted",
  FinalizerRefused: "the API server refused to add or remove the rule's finalizer",
  SecretNotFound: "a Secret the rule references does not exist",
  SecretForbidden: "a Secret the rule references may not be read",
  SecretKeyNotFound: "the referenced Secret has no such key",
  SecretValueTooShort: "the referenced Secret's value is too short to be key material",
  // Egress (shared/egress).
  InvalidSelector: "an Egress selector the API server's rules reject",
  TooManyMembers: "an EgressGroup would hold more members than it may",
  // ClusterLink (shared/clusterlink).
  ServiceNotFound: "the Service an Export or Import names does not exist",
  PortNotFound: "the Export's port is not one of its Service's",
  PortAmbiguous: "the Export names no port and its Service has several",
  InvalidName: "an Import's name is not one a Service can be given",
  PortConflict: "another Import holds the target port",
  ServiceConflict: "a Service not ours stands where the Import's Service goes",
} as const;

export type OutcomeCode = keyof typeof OUTCOME_CODES;

export type Outcome =
  /** The work is done, or there was nothing to do. `result` reads as a sentence fragment ("created", "unchanged"). */
  | { readonly kind: "done"; readonly result: string }
  /**
   * Try again later: CNF/API error after the short in-process retry, a dependency not there yet,
   * conflict storm. Not for a CNF without ready pods: its readiness event brings the rule back.
   */
  | { readonly kind: "retry"; readonly reason: string; readonly retryAfterSeconds: number }
  /** The object can never be applied as it is; recorded as Stalled on its status. Not redelivered. */
  | { readonly kind: "permanent"; readonly code: OutcomeCode; readonly reason: string }
  /** The event itself is unusable (bad JSON, unknown type, missing fields). Not redelivered. */
  | { readonly kind: "malformed"; readonly code: OutcomeCode; readonly reason: string };

export type OutcomeKind = Outcome["kind"];

export interface OutcomeReply {
  readonly httpStatus: number;
  /** Condition type written on the object's status, when the outcome concerns an object. */
  readonly condition: "Ready" | "Reconciling" | "Stalled" | null;
  /** Whether the delivery layer (Knative Trigger, connector) redelivers the event. */
  readonly redelivered: boolean;
}

/** DESIGN.md section 5, as one table. docs and the outcome test read from here. */
export const OUTCOME_TABLE: Readonly<Record<OutcomeKind, OutcomeReply>> = {
  done: { httpStatus: 202, condition: "Ready", redelivered: false },
  retry: { httpStatus: 503, condition: "Reconciling", redelivered: true },
  permanent: { httpStatus: 422, condition: "Stalled", redelivered: false },
  malformed: { httpStatus: 400, condition: null, redelivered: false },
};

export const done = (result: string): Outcome => ({ kind: "done", result });
export const retryLater = (reason: string, retryAfterSeconds = 5): Outcome => ({
  kind: "retry",
  reason,
  retryAfterSeconds,
});
export const permanent = (code: OutcomeCode, reason: string): Outcome => ({
  kind: "permanent",
  code,
  reason,
});
export const malformed = (code: OutcomeCode, reason: string): Outcome => ({
  kind: "malformed",
  code,
  reason,
});

const SEVERITY: Readonly<Record<OutcomeKind, number>> = {
  retry: 3,
  permanent: 2,
  malformed: 1,
  done: 0,
};

/** "3 created, 10 unchanged": how many of each result a set of done outcomes had. */
function summarise(outcomes: readonly Outcome[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes)
    if (o.kind === "done") counts.set(o.result, (counts.get(o.result) ?? 0) + 1);
  return [...counts].map(([result, n]) => `${n} ${result}`).join(", ");
}

/**
 * One outcome for many objects handled by one event: redelivery wins (the work is idempotent),
 * then a permanent failure, then malformed; all done reads as a summary. The longest
 * Retry-After among retries is kept.
 */
export function worstOutcome(outcomes: readonly Outcome[]): Outcome {
  if (outcomes.length === 0) return done("nothing to do");
  let worst = outcomes[0] as Outcome;
  for (const o of outcomes) {
    const delta = SEVERITY[o.kind] - SEVERITY[worst.kind];
    const longer =
      o.kind === "retry" && worst.kind === "retry" && o.retryAfterSeconds > worst.retryAfterSeconds;
    if (delta > 0 || longer) worst = o;
  }
  if (worst.kind !== "done" || outcomes.length === 1) return worst;
  return done(summarise(outcomes));
}

/**
 * The answer of an event that handled many objects on their own (a resync, a CNF-wide sync): a
 * permanent problem of one object is recorded on that object, not the event's, so only retries
 * (and done) reach the reply.
 */
export function batchOutcome(outcomes: readonly Outcome[]): Outcome {
  return worstOutcome(outcomes.map((o) => (o.kind === "permanent" ? done("stalled") : o)));
}
