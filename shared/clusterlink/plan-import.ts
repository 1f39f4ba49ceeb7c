/**
 * Pure: what one Import's Services and conditions should be (reference B.3), given its lease
 * decision and the Services found where it wants them. Beyond upstream: an Import that cannot be
 * served (a name no Service can take, bad spec, port conflict, a name taken by someone else's
 * Service) keeps none of its Services, so nothing of an invalid Import lingers.
 */
import type { Service } from "../core/objects.js";
import { importNameProblem } from "../kinds/clusterlink.js";
import type { ObservedImport } from "./observed.js";
import {
  DATAPLANE_SELECTOR,
  externalNameOf,
  importLabels,
  MANAGED_BY_LABEL,
  MERGE_LABEL,
  ownedBy,
  systemServiceName,
  type ImportKey,
} from "./names.js";
import { leaseProblem, type LeaseDecision } from "./plan-lease.js";
import { planCopies, removeCopies, type FoundSlices, type SliceWrite } from "./plan-merge.js";
import { planSources, SOURCES_CONDITION, type PeerReading } from "./plan-sources.js";
import { reconcileConditions, type WantedCondition } from "./plan-status.js";

export interface ServiceRef {
  readonly namespace: string;
  readonly name: string;
}

/** A Service as we want it: labels plus the spec fields we own. */
export interface DesiredService extends ServiceRef {
  readonly labels: Readonly<Record<string, string>>;
  readonly spec: {
    readonly type: "ClusterIP" | "ExternalName";
    readonly selector?: Readonly<Record<string, string>>;
    readonly ports?: readonly { port: number; targetPort: number; protocol: "TCP" }[];
    readonly externalName?: string;
  };
}

/**
 * Update and delete carry the resourceVersion of the Service they were decided on (read, labels
 * checked): the API server refuses them (409) if the Service changed since, so a Service that is
 * no longer ours (replaced, relabelled) is never overwritten or deleted on a stale read.
 */
export type ServiceWrite =
  | { readonly action: "create"; readonly service: DesiredService }
  | {
      readonly action: "update";
      readonly service: DesiredService;
      readonly resourceVersion: string;
    }
  | { readonly action: "delete"; readonly ref: ServiceRef; readonly resourceVersion: string };

export type ImportProblem =
  "InvalidName" | "InvalidSpec" | "PortConflict" | "ServiceConflict" | "ServiceNotFound";

export interface ImportPlan {
  readonly writes: readonly ServiceWrite[];
  /** EndpointSlice copies of a merge Import to write, or copies to remove. */
  readonly sliceWrites: readonly SliceWrite[];
  readonly conditions: readonly WantedCondition[];
  readonly problem: { readonly reason: ImportProblem; readonly message: string } | null;
}

/** The Services found at the two names the Import wants (undefined: none there). */
export interface FoundServices {
  readonly system: Service | undefined;
  /** Always undefined for an Import in the ClusterLink namespace (it has no user Service). */
  readonly user: Service | undefined;
}

export function serviceRefs(
  key: ImportKey,
  clNamespace: string,
): { system: ServiceRef; user: ServiceRef | null } {
  return {
    system: { namespace: clNamespace, name: systemServiceName(key, clNamespace) },
    user: key.namespace === clNamespace ? null : { namespace: key.namespace, name: key.name },
  };
}

export function desiredServices(
  key: ImportKey,
  port: number,
  targetPort: number,
  clNamespace: string,
): { system: DesiredService; user: DesiredService | null } {
  const refs = serviceRefs(key, clNamespace);
  const labels = importLabels(key);
  const system: DesiredService = {
    ...refs.system,
    labels,
    spec: {
      type: "ClusterIP",
      selector: DATAPLANE_SELECTOR,
      ports: [{ port, targetPort, protocol: "TCP" }],
    },
  };
  const user: DesiredService | null =
    refs.user === null
      ? null
      : {
          ...refs.user,
          labels,
          spec: {
            type: "ExternalName",
            externalName: externalNameOf(refs.system.name, clNamespace),
          },
        };
  return { system, user };
}

const sameMap = (
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean =>
  JSON.stringify(Object.entries(a ?? {}).sort()) === JSON.stringify(Object.entries(b ?? {}).sort());

/** Whether the found Service already is what we want (type, externalName, selector, ports). */
export function serviceMatches(found: Service, want: DesiredService): boolean {
  const spec = found.spec ?? {};
  const ports = (spec.ports ?? []).map((p) => ({
    port: p.port,
    targetPort: p.targetPort ?? p.port,
    protocol: p.protocol ?? "TCP",
  }));
  return (
    (spec.type ?? "ClusterIP") === want.spec.type &&
    (spec.externalName ?? "") === (want.spec.externalName ?? "") &&
    sameMap(spec.selector, want.spec.selector) &&
    JSON.stringify(ports) === JSON.stringify(want.spec.ports ?? [])
  );
}

const versionOf = (found: Service): string => found.metadata.resourceVersion ?? "";

/** Delete what of ours is there: the cleanup of an Import that cannot be served. */
function removeOwn(
  key: ImportKey,
  found: FoundServices,
  refs: ReturnType<typeof serviceRefs>,
): ServiceWrite[] {
  const writes: ServiceWrite[] = [];
  if (found.system !== undefined && ownedBy(found.system.metadata.labels, key)) {
    writes.push({ action: "delete", ref: refs.system, resourceVersion: versionOf(found.system) });
  }
  if (refs.user !== null && found.user !== undefined && ownedBy(found.user.metadata.labels, key)) {
    writes.push({ action: "delete", ref: refs.user, resourceVersion: versionOf(found.user) });
  }
  return writes;
}

function failed(
  writes: ServiceWrite[],
  reason: ImportProblem,
  message: string,
  portCondition: WantedCondition,
  slices: FoundSlices | undefined,
): ImportPlan {
  return {
    writes,
    sliceWrites: removeCopies(slices),
    problem: { reason, message },
    conditions: [
      portCondition,
      { type: "ImportServiceValid", status: "False", reason: "Error", message },
      ...reconcileConditions({ kind: "stalled", reason, message }),
    ],
  };
}

/**
 * An Import whose name no Service can take (stored with the webhook down, or before the CRD's
 * rule): no lease, no Service, and one reason on all three conditions, so its Event says what to
 * fix rather than a port or Service conflict.
 */
function invalidName(cleanup: ServiceWrite[], message: string, slices?: FoundSlices): ImportPlan {
  const invalid = { status: "False", reason: "InvalidName", message } as const;
  return {
    writes: cleanup,
    sliceWrites: removeCopies(slices),
    problem: { reason: "InvalidName", message },
    conditions: [
      { type: "ImportTargetPortValid", ...invalid },
      { type: "ImportServiceValid", ...invalid },
      ...reconcileConditions({ kind: "stalled", reason: "InvalidName", message }),
    ],
  };
}

const LEASED: WantedCondition = {
  type: "ImportTargetPortValid",
  status: "True",
  reason: "Leased",
  message: "",
};

/** Create, update or leave one Service; a Service that is not ours is never touched. */
function writeFor(
  key: ImportKey,
  found: Service | undefined,
  want: DesiredService,
): ServiceWrite | "conflict" | null {
  if (found === undefined) return { action: "create", service: want };
  if (!ownedBy(found.metadata.labels, key)) return "conflict";
  return serviceMatches(found, want)
    ? null
    : { action: "update", service: want, resourceVersion: versionOf(found) };
}

export interface ImportPlanInput {
  readonly imp: ObservedImport;
  readonly decision: LeaseDecision | undefined;
  readonly found: FoundServices;
  readonly clNamespace: string;
  /** The Peers its sources name, by name, read live (a name missing: no such Peer). */
  readonly peers: ReadonlyMap<string, PeerReading>;
  /** Read when the Import is merge, or its status says it was: copies to keep or remove. */
  readonly slices?: FoundSlices;
}

/**
 * Ready once the Services are in place, while at least one source is usable (plan-sources.ts):
 * the dataplane fails over among the sources, so one down is reported, not fatal. With none
 * usable the Import is not Ready and is Reconciling (a Peer coming back settles it; nothing is
 * wrong with the Import itself, so not Stalled).
 */
function servedConditions(
  input: ImportPlanInput,
  ready: { readonly reason: string; readonly message: string },
): WantedCondition[] {
  const spec = input.imp.spec.ok ? input.imp.spec.value : { sources: [] };
  const sources = planSources(spec.sources ?? [], input.peers, input.clNamespace);
  const verdict =
    sources.usable > 0
      ? ({ kind: "ready", ...ready } as const)
      : ({
          kind: "reconciling",
          reason: "NoUsableSource",
          message: sources.condition.message,
        } as const);
  return [
    LEASED,
    { type: "ImportServiceValid", status: "True", reason: "Valid", message: "" },
    sources.condition,
    ...reconcileConditions(verdict),
  ];
}

/**
 * A merge Import: the user's own Service named like it must exist (ours is not the user's), and
 * gets the dataplane's EndpointSlices copied next to it; none of our Services stay.
 */
function planMerge(input: ImportPlanInput, port: number, cleanup: ServiceWrite[]): ImportPlan {
  const { imp, found, slices } = input;
  const key = { namespace: imp.namespace, name: imp.name };
  const user = found.user;
  if (user === undefined || ownedBy(user.metadata.labels, key)) {
    const message = `import service '${key.namespace}/${key.name}' does not exist`;
    return failed(cleanup, "ServiceNotFound", message, LEASED, slices);
  }
  const spec = imp.spec.ok ? imp.spec.value : { port: 0 };
  const copies = planCopies({
    key,
    port: spec.port,
    targetPort: port,
    userService: user,
    found: slices ?? { dataplane: [], copies: [] },
  });
  return {
    writes: cleanup,
    sliceWrites: copies.writes,
    problem: null,
    conditions: servedConditions(input, {
      reason: "Merged",
      message: `port ${spec.port} of Service ${key.namespace}/${key.name} -> dataplane port ${port} (${copies.copies} EndpointSlice copies)`,
    }),
  };
}

/** The port a decision grants, or null when it grants none. */
export const grantedPort = (decision: LeaseDecision | undefined): number | null =>
  decision?.kind === "held" || decision?.kind === "lease" ? decision.port : null;

/** The writes that make both Services as wanted, or the Service that is in the way. */
function planServices(
  key: ImportKey,
  found: FoundServices,
  want: ReturnType<typeof desiredServices>,
): { readonly writes: ServiceWrite[] } | { readonly blocker: string } {
  const pairs: [Service | undefined, DesiredService | null][] = [
    [found.system, want.system],
    [found.user, want.user],
  ];
  const writes: ServiceWrite[] = [];
  for (const [have, desired] of pairs) {
    if (desired === null) continue;
    const write = writeFor(key, have, desired);
    if (write === "conflict") {
      const manager = have?.metadata.labels?.[MANAGED_BY_LABEL] ?? "";
      return {
        blocker: `service '${desired.namespace}/${desired.name}' already exists and managed by '${manager}'`,
      };
    }
    if (write !== null) writes.push(write);
  }
  return { writes };
}

/** The plan, with the sources' condition also on an Import that cannot be served (spec parsed). */
export function planImport(input: ImportPlanInput): ImportPlan {
  const plan = planUnlessInvalid(input);
  const { imp } = input;
  if (!imp.spec.ok || plan.conditions.some((c) => c.type === SOURCES_CONDITION)) return plan;
  const sources = planSources(imp.spec.value.sources ?? [], input.peers, input.clNamespace);
  return { ...plan, conditions: [...plan.conditions, sources.condition] };
}

function planUnlessInvalid(input: ImportPlanInput): ImportPlan {
  const { imp, decision, found, clNamespace, slices } = input;
  const key = { namespace: imp.namespace, name: imp.name };
  const cleanup = removeOwn(key, found, serviceRefs(key, clNamespace));
  const portError = (message: string): WantedCondition => ({
    type: "ImportTargetPortValid",
    status: "False",
    reason: "Error",
    message,
  });
  const nameProblem = importNameProblem(imp.name);
  if (nameProblem !== null) return invalidName(cleanup, nameProblem, slices);
  if (!imp.spec.ok) {
    return failed(cleanup, "InvalidSpec", imp.spec.message, portError(imp.spec.message), slices);
  }
  const port = grantedPort(decision);
  if (port === null) {
    const message = (decision && leaseProblem(decision)) ?? "no target port leased yet";
    return failed(cleanup, "PortConflict", message, portError(message), slices);
  }
  if (imp.labels[MERGE_LABEL] === "true") return planMerge(input, port, cleanup);
  const services = planServices(
    key,
    found,
    desiredServices(key, imp.spec.value.port, port, clNamespace),
  );
  if ("blocker" in services) {
    return failed(cleanup, "ServiceConflict", services.blocker, LEASED, slices);
  }
  return {
    writes: services.writes,
    sliceWrites: removeCopies(slices),
    problem: null,
    conditions: servedConditions(input, {
      reason: "Imported",
      message: `port ${imp.spec.value.port} -> dataplane port ${port}`,
    }),
  };
}
