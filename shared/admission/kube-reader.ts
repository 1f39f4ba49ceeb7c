/**
 * AdmissionReader over shared/kube: the few reads the admission policies need, each reduced to
 * the policies' own shapes at this boundary. RBAC objects are read with their own small schemas.
 */
import { z } from "zod";
import { NFN_NETWORK_ANNOTATION, PURPOSE_LABEL } from "./objects.js";
import { BUCKET_PERMISSION_ANNOTATION, type AnnotatedRole, type Binding } from "./rbac.js";
import type { ObservedRule } from "./snapshot.js";
import type { AdmissionReader, ReadConsistency } from "./observe.js";
import {
  DEPLOYMENTS,
  kubeObjectSchema,
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

/** resourceVersion "0" reads the watch cache; none reads consistently. */
const readFrom = (consistency: ReadConsistency = "consistent") =>
  consistency === "cached" ? { resourceVersion: "0" } : {};

export function kubeAdmissionReader(kube: KubeClient): AdmissionReader {
  return {
    async listCnfDeployments(namespace, purpose, consistency) {
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
    },
    async getRule(kind, namespace, name, consistency) {
      const object = await kube.get(ruleResource(kind), { namespace, name }, readFrom(consistency));
      return object === undefined ? null : observedRule(kind.kind, object);
    },
    async listRules(kind, namespace, consistency) {
      const list = await kube.list(ruleResource(kind), { namespace, ...readFrom(consistency) });
      return list.map((object) => observedRule(kind.kind, object));
    },
    async listRoleBindings(namespace, consistency) {
      const list = await kube.list(ROLE_BINDINGS, { namespace, ...readFrom(consistency) });
      return list.map((item) => binding("RoleBinding", item));
    },
    async listClusterRoleBindings(consistency) {
      const list = await kube.list(CLUSTER_ROLE_BINDINGS, readFrom(consistency));
      return list.map((item) => binding("ClusterRoleBinding", item));
    },
    async getRole(key, consistency): Promise<AnnotatedRole | null> {
      const role =
        key.kind === "Role"
          ? await kube.get(
              ROLES,
              { namespace: key.namespace, name: key.name },
              readFrom(consistency),
            )
          : await kube.get(CLUSTER_ROLES, { name: key.name }, readFrom(consistency));
      if (role === undefined) return null;
      return {
        ...key,
        bucketPermission: role.metadata.annotations?.[BUCKET_PERMISSION_ANNOTATION],
      };
    },
  };
}
