// Identities made from a role manifest of manifests/rbac, for tests that run a function with
// exactly its role: the file's ServiceAccount, ClusterRole and binding under a unique name, its
// namespaced Roles (if any) each in a fresh namespace standing in for the manifest's, a
// TokenRequest token, and helpers to ask what the identity may do and to read a refusal.
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import {
  ApiException,
  AuthorizationV1Api,
  CoreV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1ClusterRole,
  type V1ClusterRoleBinding,
  type V1PolicyRule,
  type V1Role,
} from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import { pollUntil } from "../../../dev/control-plane/api.js";
import {
  createKubeClient,
  isKubeError,
  NAMESPACES,
  type KubeClient,
} from "../../../shared/kube/index.js";
import { adminKubeConfig, kubeConfigWithToken, newNamespace } from "./cluster.js";

export interface Identity {
  readonly kc: KubeConfig;
  readonly kube: KubeClient;
  readonly user: string;
  /**
   * For each namespace the file's Roles are in: the fresh namespace they were created in for this
   * identity (tests run in parallel), e.g. to point the function there through its environment.
   */
  readonly roleNamespaces: ReadonlyMap<string, string>;
}

interface ManifestRole {
  readonly role: V1ClusterRole;
  readonly binding: V1ClusterRoleBinding;
  readonly serviceAccount: string;
  /** Namespaced Roles, each bound (by a RoleBinding of the file) to the ServiceAccount. */
  readonly namespacedRoles: readonly V1Role[];
}

function manifestRole(file: string): ManifestRole {
  const docs = manifestDocs(`rbac/${file}`);
  const find = <T>(kind: string): T => {
    const doc = docs.find((d) => d.kind === kind);
    if (doc === undefined) throw new Error(`manifests/rbac/${file} has no ${kind}`);
    return doc as T;
  };
  return {
    role: find<V1ClusterRole>("ClusterRole"),
    binding: find<V1ClusterRoleBinding>("ClusterRoleBinding"),
    serviceAccount: find<{ metadata: { name: string } }>("ServiceAccount").metadata.name,
    namespacedRoles: docs.filter((d): d is V1Role => d.kind === "Role"),
  };
}

/** Whether `rule` grants `verb` on `resource` of `group` (no wildcards in our manifests). */
const grants = (rule: V1PolicyRule, group: string, resource: string, verb: string): boolean =>
  (rule.apiGroups ?? []).includes(group) &&
  (rule.resources ?? []).includes(resource) &&
  rule.verbs.includes(verb);

/**
 * The file's ServiceAccount, ClusterRole and binding, created under a unique name (ClusterRoles
 * are cluster-wide and test files run in parallel), the service account in a fresh namespace.
 * `without` takes one permission out of the role: its rules lose that verb.
 */
export async function identityFrom(
  file: string,
  without?: { group: string; resource: string; verb: string },
): Promise<Identity> {
  const { role, binding, serviceAccount, namespacedRoles } = manifestRole(file);
  const id = randomBytes(3).toString("hex");
  const name = `${role.metadata?.name ?? "role"}-${id}`;
  const namespace = await newNamespace(`rbac-${id}`);
  const withoutVerb = (given: readonly V1PolicyRule[] | undefined): V1PolicyRule[] =>
    (given ?? [])
      .map((rule) =>
        without && grants(rule, without.group, without.resource, without.verb)
          ? { ...rule, verbs: rule.verbs.filter((v) => v !== without.verb) }
          : rule,
      )
      .filter((rule) => rule.verbs.length > 0);
  const rules = withoutVerb(role.rules);
  const rbac = adminKubeConfig().makeApiClient(RbacAuthorizationV1Api);
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  await rbac.createClusterRole({
    body: { ...role, metadata: { ...role.metadata, name }, rules },
  });
  await rbac.createClusterRoleBinding({
    body: {
      ...binding,
      metadata: { ...binding.metadata, name },
      roleRef: { ...binding.roleRef, name },
      subjects: [{ kind: "ServiceAccount", name: serviceAccount, namespace }],
    },
  });
  await core.createNamespacedServiceAccount({
    namespace,
    body: { metadata: { name: serviceAccount } },
  });
  const request = await core.createNamespacedServiceAccountToken({
    namespace,
    name: serviceAccount,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const roleNamespaces = new Map<string, string>();
  for (const namespaced of namespacedRoles) {
    const original = namespaced.metadata?.namespace ?? "";
    const stand = roleNamespaces.get(original) ?? (await newNamespace(`role-${id}`));
    roleNamespaces.set(original, stand);
    const roleName = namespaced.metadata?.name ?? "role";
    await rbac.createNamespacedRole({
      namespace: stand,
      body: {
        ...namespaced,
        metadata: { ...namespaced.metadata, namespace: stand },
        rules: withoutVerb(namespaced.rules),
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: stand,
      body: {
        metadata: { name: roleName, namespace: stand },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: roleName },
        subjects: [{ kind: "ServiceAccount", name: serviceAccount, namespace }],
      },
    });
  }
  const token = request.status?.token;
  if (!token) throw new Error(`no token for ${namespace}/${serviceAccount}`);
  const kc = kubeConfigWithToken(token);
  const user = `system:serviceaccount:${namespace}:${serviceAccount}`;
  // The authorizer learns of new bindings through its informers: wait until this one counts.
  const firstRule = rules.find((r) => r.verbs.length > 0);
  const probe = {
    group: firstRule?.apiGroups?.[0] ?? "",
    resource: firstRule?.resources?.[0] ?? "",
    verb: firstRule?.verbs[0] ?? "get",
  };
  await pollUntil(
    async () => ((await allowed(kc, probe)) ? true : undefined),
    () => `the binding of ${user} to take effect`,
    { timeoutMs: 10_000, intervalMs: 50 },
  );
  for (const namespaced of namespacedRoles) {
    const ruleOf = withoutVerb(namespaced.rules)[0];
    if (ruleOf === undefined) continue;
    const roleProbe = {
      group: ruleOf.apiGroups?.[0] ?? "",
      resource: ruleOf.resources?.[0] ?? "",
      verb: ruleOf.verbs[0] ?? "get",
      namespace: roleNamespaces.get(namespaced.metadata?.namespace ?? ""),
      // A rule limited to resourceNames grants only requests that name one.
      ...(ruleOf.resourceNames?.[0] === undefined ? {} : { name: ruleOf.resourceNames[0] }),
    };
    await pollUntil(
      async () => ((await allowed(kc, roleProbe)) ? true : undefined),
      () => `the role binding of ${user} in ${roleProbe.namespace} to take effect`,
      { timeoutMs: 10_000, intervalMs: 50 },
    );
  }
  return { kc, kube: createKubeClient(kc), user, roleNamespaces };
}

/**
 * SelfSubjectAccessReview: may this identity do `verb` on `resource`, in `namespace` (as
 * `kubectl auth can-i -n`) or, without one, in every namespace?
 */
export async function allowed(
  kc: KubeConfig,
  what: {
    group: string;
    resource: string;
    verb: string;
    subresource?: string;
    namespace?: string | undefined;
    /** One object by name (a rule with resourceNames grants only named requests). */
    name?: string;
  },
): Promise<boolean> {
  const review = await kc.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({
    body: {
      spec: {
        resourceAttributes: {
          group: what.group,
          resource: what.resource,
          verb: what.verb,
          ...(what.subresource ? { subresource: what.subresource } : {}),
          ...(what.namespace ? { namespace: what.namespace } : {}),
          ...(what.name ? { name: what.name } : {}),
        },
      },
    },
  });
  return review.status?.allowed === true;
}

/** Resolves with the KubeError's message (HTTP status, reason and why) of a request that must fail. */
export async function refusalMessage(request: Promise<unknown>): Promise<string> {
  try {
    await request;
  } catch (error) {
    if (isKubeError(error)) return error.message;
    throw error;
  }
  return "succeeded";
}

/** Resolves with the KubeError code of a request that must fail. */
export async function refusal(request: Promise<unknown>): Promise<string> {
  try {
    await request;
  } catch (error) {
    if (isKubeError(error)) return `${error.code} ${error.status ?? ""}`.trim();
    throw error;
  }
  return "succeeded";
}

/** A ClusterRole of a manifests/rbac file, bound where a user of it would bind it. */
export interface RoleBindingRequest {
  /** The ClusterRole's name in the file. */
  readonly role: string;
  /** A RoleBinding in this namespace; without one, a ClusterRoleBinding. */
  readonly namespace?: string;
}

/**
 * A person holding ClusterRoles of `file` (roles made to be bound, not a function's identity):
 * each role created under a unique name, bound as asked to a fresh ServiceAccount standing in
 * for the person, and that account's TokenRequest token, once every binding counts.
 */
export async function userWithRoles(
  file: string,
  bindings: readonly RoleBindingRequest[],
): Promise<Identity> {
  const docs = parseAllDocuments(
    readFileSync(new URL(`../../../manifests/rbac/${file}`, import.meta.url), "utf8"),
  ).map((d) => d.toJS() as V1ClusterRole);
  const id = randomBytes(3).toString("hex");
  const namespace = await newNamespace(`user-${id}`);
  const account = "person";
  const rbac = adminKubeConfig().makeApiClient(RbacAuthorizationV1Api);
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: account } } });
  const subjects = [{ kind: "ServiceAccount", name: account, namespace }];
  const probes: { group: string; resource: string; verb: string; namespace?: string }[] = [];
  for (const [index, binding] of bindings.entries()) {
    const role = docs.find((d) => d.kind === "ClusterRole" && d.metadata?.name === binding.role);
    if (role === undefined)
      throw new Error(`manifests/rbac/${file} has no ClusterRole ${binding.role}`);
    const name = `${binding.role}-${id}`;
    await rbac.createClusterRole({ body: { ...role, metadata: { ...role.metadata, name } } });
    const roleRef = { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name };
    const metadata = { name: `${name}-${index}` };
    if (binding.namespace === undefined) {
      await rbac.createClusterRoleBinding({ body: { metadata, roleRef, subjects } });
    } else {
      await rbac.createNamespacedRoleBinding({
        namespace: binding.namespace,
        body: { metadata: { ...metadata, namespace: binding.namespace }, roleRef, subjects },
      });
    }
    const first = role.rules?.[0];
    probes.push({
      group: first?.apiGroups?.[0] ?? "",
      resource: first?.resources?.[0] ?? "",
      verb: first?.verbs[0] ?? "get",
      ...(binding.namespace === undefined ? {} : { namespace: binding.namespace }),
    });
  }
  const request = await core.createNamespacedServiceAccountToken({
    namespace,
    name: account,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`no token for ${namespace}/${account}`);
  const kc = kubeConfigWithToken(token);
  const user = `system:serviceaccount:${namespace}:${account}`;
  for (const probe of probes) {
    await pollUntil(
      async () => ((await allowed(kc, probe)) ? true : undefined),
      () =>
        `the binding of ${user} (${probe.resource} in ${probe.namespace ?? "all"}) to take effect`,
      { timeoutMs: 10_000, intervalMs: 50 },
    );
  }
  return { kc, kube: createKubeClient(kc), user, roleNamespaces: new Map() };
}

/** OpenFaaS Community Edition's function namespace and the one account every function there runs as. */
export const OPENFAAS_CE_ACCOUNT = { namespace: "openfaas-fn", name: "default" } as const;

/**
 * OpenFaaS CE's shared account, `openfaas-fn/default` under its real name (admission policies
 * match it by username), bound to every ClusterRole manifests/openfaas/rbac-ce.yaml binds to it,
 * each created under a unique name: the union every CE function holds. (The namespaced Role of
 * the prune ledgers is left out: nothing here writes them.) Calling it again adds bindings to the
 * same account; only one test file may use it, as parallel files would share the account.
 */
export async function openFaasCeAccount(): Promise<Identity> {
  const roles = new Map(
    readdirSync(new URL("../../../manifests/rbac/", import.meta.url))
      .filter((file) => file.endsWith(".yaml") && !file.startsWith("kustomization"))
      .flatMap((file) => manifestDocs(`rbac/${file}`))
      .filter((doc) => doc.kind === "ClusterRole")
      .map((doc) => [doc.metadata?.name ?? "", doc as V1ClusterRole] as const),
  );
  const bound = manifestDocs("openfaas/rbac-ce.yaml")
    .filter((doc) => doc.kind === "ClusterRoleBinding")
    .map((doc) => (doc as V1ClusterRoleBinding).roleRef.name);
  const { namespace, name: account } = OPENFAAS_CE_ACCOUNT;
  const admin = createKubeClient(adminKubeConfig());
  await admin.create(NAMESPACES, { metadata: { name: namespace } }).catch(unlessConflict);
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const rbac = adminKubeConfig().makeApiClient(RbacAuthorizationV1Api);
  // No controller-manager here makes a namespace's default ServiceAccount.
  await core
    .createNamespacedServiceAccount({ namespace, body: { metadata: { name: account } } })
    .catch((error: unknown) => {
      if (!(error instanceof ApiException && error.code === 409)) throw error;
    });
  const id = randomBytes(3).toString("hex");
  const probes: { group: string; resource: string; verb: string }[] = [];
  for (const roleName of bound) {
    const role = roles.get(roleName);
    if (role === undefined)
      throw new Error(`rbac-ce.yaml binds ${roleName}, not in manifests/rbac`);
    const name = `${roleName}-${id}`;
    await rbac.createClusterRole({ body: { ...role, metadata: { ...role.metadata, name } } });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
        subjects: [{ kind: "ServiceAccount", name: account, namespace }],
      },
    });
    const first = role.rules?.[0];
    probes.push({
      group: first?.apiGroups?.[0] ?? "",
      resource: first?.resources?.[0] ?? "",
      verb: first?.verbs[0] ?? "get",
    });
  }
  const request = await core.createNamespacedServiceAccountToken({
    namespace,
    name: account,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`no token for ${namespace}/${account}`);
  const kc = kubeConfigWithToken(token);
  const user = `system:serviceaccount:${namespace}:${account}`;
  for (const probe of probes) {
    await pollUntil(
      async () => ((await allowed(kc, probe)) ? true : undefined),
      () => `the binding of ${user} (${probe.resource}) to take effect`,
      { timeoutMs: 10_000, intervalMs: 50 },
    );
  }
  return { kc, kube: createKubeClient(kc), user, roleNamespaces: new Map() };
}

function manifestDocs(relative: string): { kind?: string; metadata?: { name?: string } }[] {
  return parseAllDocuments(
    readFileSync(new URL(`../../../manifests/${relative}`, import.meta.url), "utf8"),
  ).map((d) => d.toJS() as { kind?: string; metadata?: { name?: string } });
}

function unlessConflict(error: unknown): void {
  if (!isKubeError(error, "conflict")) throw error;
}
