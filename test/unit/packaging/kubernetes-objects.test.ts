// The plain Kubernetes objects of manifests/rbac, manifests/openfaas and manifests/netpol-agent
// validate against the Kubernetes OpenAPI schemas (kubernetes-models); Knative objects are checked
// in knative.test.ts.
import { KUBERNETES_MODELS } from "./kubernetes-models.js";
import { docsOfFolder, type Doc } from "./repo-files.js";

const MODELS = KUBERNETES_MODELS;

const docs: Doc[] = [
  ...docsOfFolder("manifests/rbac"),
  ...docsOfFolder("manifests/openfaas"),
  ...docsOfFolder("manifests/netpol-agent"),
];

describe("manifests/rbac, manifests/openfaas and manifests/netpol-agent", () => {
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
    const ClusterRole = MODELS.ClusterRole as NonNullable<(typeof MODELS)["ClusterRole"]>;
    expect(() => new ClusterRole(role as never).validate()).toThrow(/verbs/);
  });
});
