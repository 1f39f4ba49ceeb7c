// The plain Kubernetes objects of manifests/rbac and manifests/openfaas validate against the
// Kubernetes OpenAPI schemas (kubernetes-models); Knative objects are checked in knative.test.ts.
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { ClusterRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole";
import { ClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding";
import { Role } from "kubernetes-models/rbac.authorization.k8s.io/v1/Role";
import { RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding";
import { ValidatingAdmissionPolicy } from "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy";
import { ValidatingAdmissionPolicyBinding } from "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding";
import { docsOfFolder, type Doc } from "./repo-files.js";

const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  Deployment,
  Namespace,
  ServiceAccount,
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
};

const docs: Doc[] = [...docsOfFolder("manifests/rbac"), ...docsOfFolder("manifests/openfaas")];

describe("manifests/rbac and manifests/openfaas", () => {
  it.each(docs.map((d) => [`${d.kind} ${d.metadata?.name}`, d] as const))(
    "%s validates against the Kubernetes schema",
    (_, doc) => {
      const Model = MODELS[doc.kind ?? ""];
      expect(Model).toBeDefined();
      expect(() => new (Model as NonNullable<typeof Model>)(doc as never).validate()).not.toThrow();
    },
  );

  it("the schema check is real: a ClusterRole rule without verbs is refused", () => {
    const role = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "x" },
      rules: [{ apiGroups: [""], resources: ["pods"] }],
    };
    expect(() => new ClusterRole(role as never).validate()).toThrow(/verbs/);
  });
});
