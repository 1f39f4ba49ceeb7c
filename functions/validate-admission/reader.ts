/**
 * AdmissionReader over the Kubernetes API: the few reads the admission policies need, each
 * reduced to the policy's own shapes at this boundary (zod for custom objects).
 */
import {
  ApiException,
  AppsV1Api,
  CustomObjectsApi,
  KubeConfig,
  RbacAuthorizationV1Api,
  type V1ClusterRoleBinding,
  type V1RoleBinding,
} from "@kubernetes/client-node";
import { z } from "zod";
import {
  BUCKET_PERMISSION_ANNOTATION,
  type AnnotatedRole,
  type Binding,
  type ObservedRule,
} from "../../shared/admission/index.js";
import { NFN_NETWORK_ANNOTATION, PURPOSE_LABEL } from "../../shared/admission/objects.js";
import { kubeObjectSchema } from "../../shared/admission/review.js";
import type { AdmissionReader } from "../../shared/admission/observe.js";
import { RULE_GROUP, RULE_VERSION } from "../../shared/rules/index.js";

const ruleListSchema = z.object({ items: z.array(kubeObjectSchema) });

function observedRule(kind: string, object: z.infer<typeof kubeObjectSchema>): ObservedRule {
  return {
    kind,
    name: object.metadata.name ?? "",
    purpose: object.metadata.labels?.[PURPOSE_LABEL],
    deleting: Boolean(object.metadata.deletionTimestamp),
    spec: object.spec,
  };
}

function binding(kind: Binding["kind"], item: V1RoleBinding | V1ClusterRoleBinding): Binding {
  return {
    kind,
    name: item.metadata?.name ?? "",
    namespace: kind === "RoleBinding" ? (item.metadata?.namespace ?? "") : "",
    roleRef: { kind: item.roleRef.kind, name: item.roleRef.name },
    subjects: (item.subjects ?? []).map((s) => ({
      kind: s.kind,
      name: s.name,
      namespace: s.namespace,
    })),
  };
}

const isNotFound = (error: unknown): boolean => error instanceof ApiException && error.code === 404;

async function orNull<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

export function kubeAdmissionReader(kc: KubeConfig): AdmissionReader {
  const apps = kc.makeApiClient(AppsV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const group = RULE_GROUP;
  const version = RULE_VERSION;
  return {
    async listCnfDeployments(namespace, purpose) {
      const list = await apps.listNamespacedDeployment({
        namespace,
        labelSelector: `${PURPOSE_LABEL}=${purpose}`,
      });
      return list.items.map((d) => ({
        name: d.metadata?.name ?? "",
        deleting: d.metadata?.deletionTimestamp != null,
        nfnNetworkAnnotation: d.spec?.template.metadata?.annotations?.[NFN_NETWORK_ANNOTATION],
      }));
    },
    async getRule(kind, namespace, name) {
      const raw: unknown = await orNull(
        custom.getNamespacedCustomObject({ group, version, namespace, plural: kind.plural, name }),
      );
      return raw === null ? null : observedRule(kind.kind, kubeObjectSchema.parse(raw));
    },
    async listRules(kind, namespace) {
      const raw: unknown = await custom.listNamespacedCustomObject({
        group,
        version,
        namespace,
        plural: kind.plural,
      });
      return ruleListSchema.parse(raw).items.map((item) => observedRule(kind.kind, item));
    },
    async listRoleBindings(namespace) {
      const list = await rbac.listNamespacedRoleBinding({ namespace });
      return list.items.map((item) => binding("RoleBinding", item));
    },
    async listClusterRoleBindings() {
      const list = await rbac.listClusterRoleBinding();
      return list.items.map((item) => binding("ClusterRoleBinding", item));
    },
    async getRole(key): Promise<AnnotatedRole | null> {
      const role =
        key.kind === "Role"
          ? await orNull(rbac.readNamespacedRole({ namespace: key.namespace, name: key.name }))
          : await orNull(rbac.readClusterRole({ name: key.name }));
      if (role === null) return null;
      return {
        ...key,
        bucketPermission: role.metadata?.annotations?.[BUCKET_PERMISSION_ANNOTATION],
      };
    },
  };
}

/** The reader for the process's own identity: in-cluster service account, or KUBECONFIG. */
export function clusterAdmissionReader(): AdmissionReader {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kubeAdmissionReader(kc);
}
