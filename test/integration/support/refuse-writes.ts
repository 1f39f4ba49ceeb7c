// Writes the API server refuses, made to happen on demand: a ValidatingAdmissionPolicy (what a
// cluster's policy engine or an operator's rule does to an object). The API server loads policies
// asynchronously, so one is in force only once a probe write was refused.
import { AdmissionregistrationV1Api } from "@kubernetes/client-node";
import { pollUntil } from "../../../dev/control-plane/api.js";
import { adminKubeConfig } from "./cluster.js";

export interface RefusedWrites {
  /** Unique in the cluster: the policy's and its binding's name. */
  readonly name: string;
  /** What the policy looks at, e.g. {apiGroups: ["clusterlink.net"], resources: ["exports/status"]}. */
  readonly resources: readonly {
    readonly apiGroups: readonly string[];
    readonly resources: readonly string[];
    readonly operations: readonly ("CREATE" | "UPDATE" | "DELETE")[];
  }[];
  /** CEL over `object` / `oldObject`: true admits the write. */
  readonly admits: string;
  readonly message: string;
  /** Only objects of this namespace (none: cluster-scoped objects and every namespace). */
  readonly namespace?: string;
  /** Makes a write the policy refuses; true once it was refused (polled until then). */
  readonly probe: () => Promise<boolean>;
}

/** The policy, in force when this resolves; returns its removal. */
export async function refuseWrites(spec: RefusedWrites): Promise<() => Promise<void>> {
  const policies = adminKubeConfig().makeApiClient(AdmissionregistrationV1Api);
  const { name } = spec;
  await policies.createValidatingAdmissionPolicy({
    body: {
      metadata: { name },
      spec: {
        failurePolicy: "Fail",
        matchConstraints: {
          resourceRules: spec.resources.map((r) => ({
            apiGroups: [...r.apiGroups],
            apiVersions: ["*"],
            operations: [...r.operations],
            resources: [...r.resources],
          })),
        },
        validations: [{ expression: spec.admits, message: spec.message, reason: "Invalid" }],
      },
    },
  });
  await policies.createValidatingAdmissionPolicyBinding({
    body: {
      metadata: { name },
      spec: {
        policyName: name,
        validationActions: ["Deny"],
        ...(spec.namespace === undefined
          ? {}
          : {
              matchResources: {
                namespaceSelector: {
                  matchLabels: { "kubernetes.io/metadata.name": spec.namespace },
                },
              },
            }),
      },
    },
  });
  await pollUntil(
    async () => ((await spec.probe()) ? true : undefined),
    () => `the ValidatingAdmissionPolicy ${name} to refuse a write`,
    { timeoutMs: 15_000, intervalMs: 100 },
  );
  return async () => {
    await policies.deleteValidatingAdmissionPolicyBinding({ name }).catch(() => undefined);
    await policies.deleteValidatingAdmissionPolicy({ name }).catch(() => undefined);
  };
}
