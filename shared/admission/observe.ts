/**
 * The read-only observation shell: executes an ObservationPlan against an AdmissionReader and
 * returns the snapshot the pure policies decide on. Independent reads run concurrently; roles
 * are read only after the bindings that name the requester are known.
 */
import type { ObservationPlan } from "./plan-admission.js";
import {
  bindingsForUser,
  rolesGrantedBy,
  type AnnotatedRole,
  type Binding,
  type RequestUser,
  type RoleKey,
} from "./rbac.js";
import type { AdmissionSnapshot, ObservedCnf, ObservedRule, RbacSnapshot } from "./snapshot.js";
import type { AdmissionRuleKind } from "./kinds.js";

/** What the shell needs from the API server; implemented over shared/kube (reader.ts). */
export interface AdmissionReader {
  /** Deployments in `namespace` labelled sdewanPurpose=<purpose>. */
  listCnfDeployments(namespace: string, purpose: string): Promise<ObservedCnf[]>;
  /** One rule object, or null when it does not exist. */
  getRule(kind: AdmissionRuleKind, namespace: string, name: string): Promise<ObservedRule | null>;
  listRules(kind: AdmissionRuleKind, namespace: string): Promise<ObservedRule[]>;
  listRoleBindings(namespace: string): Promise<Binding[]>;
  listClusterRoleBindings(): Promise<Binding[]>;
  /** A Role or ClusterRole, or null when it does not exist. */
  getRole(key: RoleKey): Promise<AnnotatedRole | null>;
}

/** True when the plan needs no API reads at all (the snapshot is then EMPTY_SNAPSHOT). */
export function readsNothing(plan: ObservationPlan): boolean {
  return (
    plan.cnfPurpose === undefined &&
    plan.referencedObjects.length === 0 &&
    plan.referrerKinds.length === 0 &&
    !plan.rbac
  );
}

async function observeRbac(
  reader: AdmissionReader,
  namespace: string,
  user: RequestUser,
): Promise<RbacSnapshot> {
  const [roleBindings, clusterRoleBindings] = await Promise.all([
    reader.listRoleBindings(namespace),
    reader.listClusterRoleBindings(),
  ]);
  const granted = rolesGrantedBy(bindingsForUser([...roleBindings, ...clusterRoleBindings], user));
  const roles = await Promise.all(granted.map((key) => reader.getRole(key)));
  return {
    roleBindings,
    clusterRoleBindings,
    roles: roles.filter((role): role is AnnotatedRole => role !== null),
  };
}

export async function observeAdmission(
  plan: ObservationPlan,
  user: RequestUser,
  reader: AdmissionReader,
  findKind: (kind: string) => AdmissionRuleKind | undefined,
): Promise<AdmissionSnapshot> {
  const { namespace } = plan;
  const noRbac: RbacSnapshot = { roleBindings: [], clusterRoleBindings: [], roles: [] };
  const [cnfDeployments, referenced, referrers, rbac] = await Promise.all([
    plan.cnfPurpose === undefined
      ? Promise.resolve([])
      : reader.listCnfDeployments(namespace, plan.cnfPurpose),
    Promise.all(
      plan.referencedObjects.map(({ kind, name }) => {
        const entry = findKind(kind);
        return entry === undefined ? Promise.resolve(null) : reader.getRule(entry, namespace, name);
      }),
    ),
    Promise.all(plan.referrerKinds.map((kind) => reader.listRules(kind, namespace))),
    plan.rbac ? observeRbac(reader, namespace, user) : Promise.resolve(noRbac),
  ]);
  return {
    cnfDeployments,
    referencedObjects: referenced.filter((rule): rule is ObservedRule => rule !== null),
    referrerCandidates: referrers.flat(),
    rbac,
  };
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
    listCnfDeployments: count((ns: string, purpose: string) =>
      reader.listCnfDeployments(ns, purpose),
    ),
    getRule: count((kind: AdmissionRuleKind, ns: string, name: string) =>
      reader.getRule(kind, ns, name),
    ),
    listRules: count((kind: AdmissionRuleKind, ns: string) => reader.listRules(kind, ns)),
    listRoleBindings: count((ns: string) => reader.listRoleBindings(ns)),
    listClusterRoleBindings: count(() => reader.listClusterRoleBindings()),
    getRole: count((key: RoleKey) => reader.getRole(key)),
  };
}
