/**
 * AdmissionReader over shared/kube: the few reads the admission policies need, each reduced to
 * the policies' own shapes at this boundary. RBAC objects are read with their own small schemas.
 */
import * as z from "zod";
import { SingleFlight } from "../core/single-flight.js";
import { NFN_NETWORK_ANNOTATION, PURPOSE_LABEL } from "./objects.js";
import {
  BUCKET_PERMISSION_ANNOTATION,
  type AnnotatedRole,
  type Binding,
  type RoleKey,
} from "./rbac.js";
import type { ObservedCnf, ObservedRule } from "./snapshot.js";
import type { AdmissionReader, ReadConsistency, ReviewedUser } from "./observe.js";
import {
  DEPLOYMENTS,
  kubeObjectSchema,
  readOptions,
  ruleResource,
  type KubeClient,
  type KubeObject,
  type ResourceType,
} from "../kube/index.js";

const bindingSchema = kubeObjectSchema.extend({
  roleRef: z.looseObject({ kind: z.string(), name: z.string() }),
  subjects: z
    .array(z.looseObject({ kind: z.string(), name: z.string(), namespace: z.string().optional() }))
    .nullish(),
});
type BindingObject = z.infer<typeof bindingSchema>;

const rbacType = <T extends KubeObject>(
  kind: string,
  plural: string,
  namespaced: boolean,
  schema: z.ZodType<T>,
): ResourceType<T> => ({
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind,
  plural,
  namespaced,
  statusSubresource: false,
  schema,
});

const ROLE_BINDINGS = rbacType("RoleBinding", "rolebindings", true, bindingSchema);
const CLUSTER_ROLE_BINDINGS = rbacType(
  "ClusterRoleBinding",
  "clusterrolebindings",
  false,
  bindingSchema,
);
const ROLES = rbacType("Role", "roles", true, kubeObjectSchema);
const CLUSTER_ROLES = rbacType("ClusterRole", "clusterroles", false, kubeObjectSchema);

/**
 * SubjectAccessReview: the API server insists its metadata is empty and answers with none, so the
 * reply gets a placeholder name before the common object schema reads it.
 */
const subjectAccessReviewSchema = z.preprocess(
  (raw) =>
    typeof raw === "object" && raw !== null
      ? { ...raw, metadata: { name: "subjectaccessreview" } }
      : raw,
  kubeObjectSchema.extend({ status: z.looseObject({ allowed: z.boolean() }) }),
);

const SUBJECT_ACCESS_REVIEWS: ResourceType<z.infer<typeof subjectAccessReviewSchema>> = {
  group: "authorization.k8s.io",
  version: "v1",
  kind: "SubjectAccessReview",
  plural: "subjectaccessreviews",
  namespaced: false,
  statusSubresource: false,
  schema: subjectAccessReviewSchema,
};

/** May `user` (as the API server authenticated it, groups and extra included) get the Secret? */
async function mayGetSecret(
  kube: KubeClient,
  user: ReviewedUser,
  namespace: string,
  name: string,
): Promise<boolean> {
  const review = await kube.create(SUBJECT_ACCESS_REVIEWS, {
    metadata: { name: "" },
    spec: {
      user: user.username,
      groups: user.groups,
      ...(user.uid === undefined ? {} : { uid: user.uid }),
      ...(user.extra === undefined ? {} : { extra: user.extra }),
      resourceAttributes: { namespace, verb: "get", group: "", resource: "secrets", name },
    },
  });
  return review.status.allowed;
}

function observedRule(kind: string, object: KubeObject): ObservedRule {
  return {
    kind,
    name: object.metadata.name,
    purpose: object.metadata.labels?.[PURPOSE_LABEL],
    deleting: object.metadata.deletionTimestamp !== undefined,
    spec: object.spec,
  };
}

function binding(kind: Binding["kind"], item: BindingObject): Binding {
  return {
    kind,
    name: item.metadata.name,
    namespace: kind === "RoleBinding" ? (item.metadata.namespace ?? "") : "",
    roleRef: { kind: item.roleRef.kind, name: item.roleRef.name },
    subjects: (item.subjects ?? []).map((s) => ({
      kind: s.kind,
      name: s.name,
      namespace: s.namespace,
    })),
  };
}

/** The watch cache or a consistent read (shared/kube/freshness.ts). */
const readFrom = (consistency: ReadConsistency = "consistent") => readOptions(consistency);

/**
 * Watch-cache reads in flight, per API client (so one identity never answers another's review).
 * Reviews that arrive together, e.g. a `kubectl apply` of 200 rules naming one policy, share one
 * read of it instead of sending 200 (which queued behind each other and made the webhook's p99 at
 * 200 at once about a second). Nothing outlives the read: an entry goes when its answer arrives,
 * so a review never gets an answer older than a read it could have sent itself, the same
 * freshness a watch-cache read gives. Consistent reads (before a denial) are never shared.
 */
const cachedReadsInFlight = new WeakMap<KubeClient, SingleFlight<unknown>>();

function sharedWhenCached<T>(
  kube: KubeClient,
  consistency: ReadConsistency | undefined,
  key: readonly unknown[],
  read: () => Promise<T>,
): Promise<T> {
  if (consistency !== "cached") return read();
  let inFlight = cachedReadsInFlight.get(kube);
  if (inFlight === undefined) {
    inFlight = new SingleFlight();
    cachedReadsInFlight.set(kube, inFlight);
  }
  return inFlight.run(JSON.stringify(key), read) as Promise<T>;
}

export function kubeAdmissionReader(kube: KubeClient): AdmissionReader {
  const shared = <T>(
    consistency: ReadConsistency | undefined,
    key: readonly unknown[],
    read: () => Promise<T>,
  ): Promise<T> => sharedWhenCached(kube, consistency, key, read);
  return {
    listCnfDeployments: (namespace, purpose, consistency) =>
      shared(consistency, ["deployments", namespace, purpose], () =>
        readCnfDeployments(kube, namespace, purpose, consistency),
      ),
    getRule: (kind, namespace, name, consistency) =>
      shared(consistency, ["rule", kind.kind, namespace, name], async () => {
        const object = await kube.get(
          ruleResource(kind),
          { namespace, name },
          readFrom(consistency),
        );
        return object === undefined ? null : observedRule(kind.kind, object);
      }),
    listRules: (kind, namespace, consistency) =>
      shared(consistency, ["rules", kind.kind, namespace], async () => {
        const list = await kube.list(ruleResource(kind), { namespace, ...readFrom(consistency) });
        return list.map((object) => observedRule(kind.kind, object));
      }),
    listRoleBindings: (namespace, consistency) =>
      shared(consistency, ["rolebindings", namespace], async () => {
        const list = await kube.list(ROLE_BINDINGS, { namespace, ...readFrom(consistency) });
        return list.map((item) => binding("RoleBinding", item));
      }),
    listClusterRoleBindings: (consistency) =>
      shared(consistency, ["clusterrolebindings"], async () => {
        const list = await kube.list(CLUSTER_ROLE_BINDINGS, readFrom(consistency));
        return list.map((item) => binding("ClusterRoleBinding", item));
      }),
    getRole: (key, consistency) =>
      shared(consistency, ["role", key.kind, key.namespace, key.name], () =>
        readRole(kube, key, consistency),
      ),
    mayGetSecret: (user, namespace, name) => mayGetSecret(kube, user, namespace, name),
  };
}

async function readCnfDeployments(
  kube: KubeClient,
  namespace: string,
  purpose: string,
  consistency: ReadConsistency | undefined,
): Promise<ObservedCnf[]> {
  const list = await kube.list(DEPLOYMENTS, {
    namespace,
    labelSelector: { [PURPOSE_LABEL]: purpose },
    ...readFrom(consistency),
  });
  return list.map((d) => ({
    name: d.metadata.name,
    deleting: d.metadata.deletionTimestamp !== undefined,
    nfnNetworkAnnotation: d.spec.template.metadata?.annotations?.[NFN_NETWORK_ANNOTATION],
  }));
}

async function readRole(
  kube: KubeClient,
  key: RoleKey,
  consistency: ReadConsistency | undefined,
): Promise<AnnotatedRole | null> {
  const role =
    key.kind === "Role"
      ? await kube.get(ROLES, { namespace: key.namespace, name: key.name }, readFrom(consistency))
      : await kube.get(CLUSTER_ROLES, { name: key.name }, readFrom(consistency));
  if (role === undefined) return null;
  return {
    ...key,
    bucketPermission: role.metadata.annotations?.[BUCKET_PERMISSION_ANNOTATION],
  };
}
