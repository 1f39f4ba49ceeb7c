/**
 * The read-only observation shell: executes an ObservationPlan against an AdmissionReader and
 * returns the snapshot the pure policies decide on; independent reads run concurrently.
 * decideAdmission reads the watch cache first and reads again consistently before it denies, so
 * a denial never rests on a cached read. Which reads may be cached, and why:
 * docs/code-notes.md (admission/observe.ts).
 */
import { planAdmission, type ObservationPlan } from "./plan-admission.js";
import {
  bindingsForUser,
  rolesGrantedBy,
  type AnnotatedRole,
  type Binding,
  type RequestUser,
  type RoleKey,
} from "./rbac.js";
import type { ReadFreshness } from "../kube/freshness.js";
import type { AdmissionRequest } from "./review.js";
import type {
  AdmissionSnapshot,
  ObservedCnf,
  ObservedRule,
  RbacSnapshot,
  SecretAccess,
} from "./snapshot.js";
import { messageOf } from "../core/error-message.js";
import type { AdmissionRuleKind } from "./kinds.js";
import type { Verdict } from "./verdict.js";

/**
 * "cached": whatever the API server's watch cache holds (resourceVersion=0), no wait for it to
 * catch up with etcd. "consistent": the current state (the API server's default).
 */
export type ReadConsistency = ReadFreshness;

/**
 * What the shell needs from the API server; implemented over shared/kube (kube-reader.ts). Every read
 * takes a ReadConsistency, "consistent" when omitted.
 */
export interface AdmissionReader {
  /** Deployments in `namespace` labelled sdewanPurpose=<purpose>. */
  listCnfDeployments(
    namespace: string,
    purpose: string,
    consistency?: ReadConsistency,
  ): Promise<ObservedCnf[]>;
  /** One rule object, or null when it does not exist. */
  getRule(
    kind: AdmissionRuleKind,
    namespace: string,
    name: string,
    consistency?: ReadConsistency,
  ): Promise<ObservedRule | null>;
  /** The rules of `kind` in `namespace` (only the kinds whose names are unique per CNF). */
  listRules(
    kind: AdmissionRuleKind,
    namespace: string,
    consistency?: ReadConsistency,
  ): Promise<ObservedRule[]>;
  listRoleBindings(namespace: string, consistency?: ReadConsistency): Promise<Binding[]>;
  listClusterRoleBindings(consistency?: ReadConsistency): Promise<Binding[]>;
  /** A Role or ClusterRole, or null when it does not exist. */
  getRole(key: RoleKey, consistency?: ReadConsistency): Promise<AnnotatedRole | null>;
  /** Whether `user` may get Secret namespace/name (a SubjectAccessReview; never cached). */
  mayGetSecret(user: ReviewedUser, namespace: string, name: string): Promise<boolean>;
}

/** The requester as the API server authenticated it (AdmissionReview userInfo). */
export type ReviewedUser = AdmissionRequest["userInfo"];

/** True when the plan needs no API reads at all (the snapshot is then EMPTY_SNAPSHOT). */
export function readsNothing(plan: ObservationPlan): boolean {
  return (
    plan.cnfPurpose === undefined &&
    plan.referencedObjects.length === 0 &&
    !plan.rbac &&
    plan.uniqueNameKinds.length === 0 &&
    plan.secretNames.length === 0
  );
}

async function observeRbac(
  reader: AdmissionReader,
  namespace: string,
  user: RequestUser,
  consistency: ReadConsistency,
): Promise<RbacSnapshot> {
  const [roleBindings, clusterRoleBindings] = await Promise.all([
    reader.listRoleBindings(namespace, consistency),
    reader.listClusterRoleBindings(consistency),
  ]);
  const granted = rolesGrantedBy(bindingsForUser([...roleBindings, ...clusterRoleBindings], user));
  const roles = await Promise.all(granted.map((key) => reader.getRole(key, consistency)));
  return {
    roleBindings,
    clusterRoleBindings,
    roles: roles.filter((role): role is AnnotatedRole => role !== null),
  };
}

/** Fails closed: an answer that cannot be had is "unknown", which the policy denies. */
export async function secretAccess(
  reader: AdmissionReader,
  namespace: string,
  user: ReviewedUser,
  name: string,
): Promise<SecretAccess> {
  if (user.username === "") return { name, allowed: "unknown", why: "the request names no user" };
  try {
    return { name, allowed: await reader.mayGetSecret(user, namespace, name) };
  } catch (error) {
    return { name, allowed: "unknown", why: `SubjectAccessReview failed: ${messageOf(error)}` };
  }
}

/**
 * Reads what `plan` asks for. `consistency` applies to the reads that may come from the cache
 * (see the header); the others are always consistent.
 */
export async function observeAdmission(
  plan: ObservationPlan,
  user: ReviewedUser,
  reader: AdmissionReader,
  findKind: (kind: string) => AdmissionRuleKind | undefined,
  consistency: ReadConsistency = "consistent",
): Promise<AdmissionSnapshot> {
  const { namespace } = plan;
  const noRbac: RbacSnapshot = { roleBindings: [], clusterRoleBindings: [], roles: [] };
  const [cnfDeployments, referenced, rbac, peers, access] = await Promise.all([
    plan.cnfPurpose === undefined
      ? Promise.resolve([])
      : reader.listCnfDeployments(namespace, plan.cnfPurpose, "consistent"),
    Promise.all(
      plan.referencedObjects.map(({ kind, name }) => {
        const entry = findKind(kind);
        return entry === undefined
          ? Promise.resolve(null)
          : reader.getRule(entry, namespace, name, consistency);
      }),
    ),
    plan.rbac ? observeRbac(reader, namespace, user, consistency) : Promise.resolve(noRbac),
    Promise.all(
      plan.uniqueNameKinds.map((kind) => reader.listRules(kind, namespace, "consistent")),
    ),
    Promise.all(plan.secretNames.map((name) => secretAccess(reader, namespace, user, name))),
  ]);
  return {
    cnfDeployments,
    referencedObjects: referenced.filter((rule): rule is ObservedRule => rule !== null),
    rbac,
    cnfPeers: peers.flat(),
    secretAccess: access,
  };
}

/**
 * The verdict for `request`: on cached reads when they allow it, else on consistent reads (see
 * the header).
 */
export async function decideAdmission(
  request: AdmissionRequest,
  plan: ObservationPlan,
  reader: AdmissionReader,
  findKind: (kind: string) => AdmissionRuleKind | undefined,
): Promise<Verdict> {
  const observe = async (consistency: ReadConsistency) =>
    planAdmission(
      request,
      await observeAdmission(plan, request.userInfo, reader, findKind, consistency),
    );
  const readsCache = plan.referencedObjects.length > 0 || plan.rbac;
  if (!readsCache) return observe("consistent");
  const onCache = await observe("cached");
  return onCache.allowed ? onCache : observe("consistent");
}

/** Counts every read in `calls.api` (logged with the reply and exported as a metric). */
export function countingReader(reader: AdmissionReader, calls: { api: number }): AdmissionReader {
  const count =
    <A extends unknown[], R>(read: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      calls.api += 1;
      return read(...args);
    };
  return {
    listCnfDeployments: count((ns: string, purpose: string, consistency?: ReadConsistency) =>
      reader.listCnfDeployments(ns, purpose, consistency),
    ),
    getRule: count(
      (kind: AdmissionRuleKind, ns: string, name: string, consistency?: ReadConsistency) =>
        reader.getRule(kind, ns, name, consistency),
    ),
    listRules: count((kind: AdmissionRuleKind, ns: string, consistency?: ReadConsistency) =>
      reader.listRules(kind, ns, consistency),
    ),
    listRoleBindings: count((ns: string, consistency?: ReadConsistency) =>
      reader.listRoleBindings(ns, consistency),
    ),
    listClusterRoleBindings: count((consistency?: ReadConsistency) =>
      reader.listClusterRoleBindings(consistency),
    ),
    getRole: count((key: RoleKey, consistency?: ReadConsistency) =>
      reader.getRole(key, consistency),
    ),
    mayGetSecret: count((user: ReviewedUser, ns: string, name: string) =>
      reader.mayGetSecret(user, ns, name),
    ),
  };
}
