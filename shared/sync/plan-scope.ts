/**
 * Pure mapping of an on-deployment-ready event to the CNFs it concerns: one CNF (namespace +
 * purpose), every CNF of a namespace, or every CNF. The event is only a hint: a Deployment or
 * Pod is re-read first, and only a deleted one falls back to what the event carried.
 */
import { compareStrings } from "../core/order.js";
import type { OutcomeCode } from "../core/outcome.js";
import type { ObjectRef, ResyncScope } from "../events/types.js";
import { PURPOSE_LABEL } from "../kinds/index.js";
import type { CnfScope } from "./observed.js";

export type CnfWork =
  | { readonly kind: "cnf"; readonly scope: CnfScope }
  | { readonly kind: "namespace"; readonly namespace: string }
  | { readonly kind: "all" }
  /** Nothing to do, and why (logged; answered 202). */
  | { readonly kind: "skip"; readonly reason: string }
  | { readonly kind: "malformed"; readonly code: OutcomeCode; readonly reason: string };

/** The kinds whose events this planning takes. */
export type CnfObjectKind = "Deployment" | "Pod";

const API_VERSIONS: Readonly<Record<CnfObjectKind, string>> = { Deployment: "apps/v1", Pod: "v1" };

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** Which kind `ref` names, or why this function cannot take it. */
export function cnfObjectKind(
  ref: ObjectRef,
): { ok: true; kind: CnfObjectKind } | { ok: false; work: CnfWork } {
  const kind = ref.kind as CnfObjectKind;
  // Own keys only: a kind named "constructor" must not find Object.prototype's member.
  const apiVersion = Object.hasOwn(API_VERSIONS, kind) ? API_VERSIONS[kind] : undefined;
  if (apiVersion === undefined || (ref.apiVersion !== "" && ref.apiVersion !== apiVersion)) {
    const reason = `on-deployment-ready takes apps/v1 Deployment and v1 Pod events, not ${
      ref.apiVersion || "(no apiVersion)"
    } ${ref.kind}; rule events go to reconcile-rule`;
    return { ok: false, work: { kind: "malformed", code: "UnknownKind", reason } };
  }
  if (ref.namespace === "") {
    const reason = `${ref.kind} ${ref.name}: names no namespace (CNF objects are namespaced)`;
    return { ok: false, work: { kind: "malformed", code: "MissingNamespace", reason } };
  }
  return { ok: true, kind };
}

function labelsOf(object: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  const metadata = object?.["metadata"];
  if (typeof metadata !== "object" || metadata === null) return {};
  const labels = (metadata as Record<string, unknown>)["labels"];
  return typeof labels === "object" && labels !== null ? (labels as Record<string, unknown>) : {};
}

export interface ObjectWorkInput {
  readonly ref: ObjectRef;
  /** The object's labels as re-read now, or undefined when it no longer exists. */
  readonly liveLabels: Readonly<Record<string, string>> | undefined;
  /** Resource mode: the object as the event carried it (for a deleted object, its last state). */
  readonly eventObject?: Readonly<Record<string, unknown>>;
}

/**
 * A Deployment or Pod -> its CNF, by the sdewanPurpose label. A deleted object is read from the
 * event (Resource mode); without one (Reference mode) the whole namespace is synced, which also
 * releases the rules of a CNF that is gone.
 */
export function planObjectWork(input: ObjectWorkInput): CnfWork {
  const { ref } = input;
  const where = `${ref.kind} ${ref.namespace}/${ref.name}`;
  if (input.liveLabels !== undefined) {
    const purpose = input.liveLabels[PURPOSE_LABEL];
    if (purpose === undefined) return { kind: "skip", reason: `${where} has no ${PURPOSE_LABEL}` };
    return { kind: "cnf", scope: { namespace: ref.namespace, purpose } };
  }
  if (input.eventObject !== undefined) {
    const purpose = labelsOf(input.eventObject)[PURPOSE_LABEL];
    if (typeof purpose === "string") {
      return { kind: "cnf", scope: { namespace: ref.namespace, purpose } };
    }
    return { kind: "skip", reason: `${where} is gone and had no ${PURPOSE_LABEL}` };
  }
  return { kind: "namespace", namespace: ref.namespace };
}

/** A resync scope -> work; a namespace or purpose that cannot exist is malformed. */
export function planResyncWork(scope: ResyncScope): CnfWork {
  const { namespace, purpose } = scope;
  if (namespace !== undefined && (namespace.length > 63 || !DNS_LABEL.test(namespace))) {
    const reason = `resync scope: namespace "${namespace}" is not a valid namespace name`;
    return { kind: "malformed", code: "BadResyncScope", reason };
  }
  if (purpose !== undefined && (purpose.length > 63 || !LABEL_VALUE.test(purpose))) {
    const reason = `resync scope: purpose "${purpose}" is not a valid ${PURPOSE_LABEL} label value`;
    return { kind: "malformed", code: "BadResyncScope", reason };
  }
  if (purpose !== undefined && namespace === undefined) {
    const reason = "resync scope: purpose is only meaningful with a namespace";
    return { kind: "malformed", code: "BadResyncScope", reason };
  }
  if (namespace === undefined) return { kind: "all" };
  if (purpose === undefined) return { kind: "namespace", namespace };
  return { kind: "cnf", scope: { namespace, purpose } };
}

/** A rule placed in its scope; `purpose` undefined when the rule lacks the label. */
export interface ScopedRule<T> {
  readonly namespace: string;
  readonly purpose: string | undefined;
  readonly rule: T;
}

export interface ScopeGroup<T> {
  readonly scope: CnfScope;
  /** False for the rules of a namespace that carry no purpose label (they belong to no CNF). */
  readonly labelled: boolean;
  readonly rules: readonly T[];
}

/**
 * Every (namespace, purpose) a resync must visit: each CNF Deployment's, with or without rules,
 * and each one rules name, with or without a CNF. Sorted, so runs are repeatable.
 */
export function planScopeGroups<T>(
  cnfs: readonly CnfScope[],
  rules: readonly ScopedRule<T>[],
): ScopeGroup<T>[] {
  const groups = new Map<string, { scope: CnfScope; labelled: boolean; rules: T[] }>();
  const groupOf = (scope: CnfScope, labelled: boolean) => {
    const key = JSON.stringify([scope.namespace, scope.purpose, labelled]);
    let group = groups.get(key);
    if (group === undefined) {
      group = { scope, labelled, rules: [] };
      groups.set(key, group);
    }
    return group;
  };
  for (const scope of cnfs) groupOf(scope, true);
  for (const { namespace, purpose, rule } of rules) {
    groupOf({ namespace, purpose: purpose ?? "" }, purpose !== undefined).rules.push(rule);
  }
  return [...groups.values()].sort(
    (a, b) =>
      compareStrings(a.scope.namespace, b.scope.namespace) ||
      compareStrings(a.scope.purpose, b.scope.purpose) ||
      Number(b.labelled) - Number(a.labelled),
  );
}
