// The ClusterLink CRDs carry upstream's kinds, fields and defaults, so ClusterLink's own
// manifests apply unchanged, plus the columns and name limit an operator reads.
import { buildCrd, CLUSTERLINK_CRDS } from "../../../shared/kinds/crds.js";
import type { SchemaNode } from "../../../shared/kinds/structural-schema.js";

interface Version {
  subresources?: { status?: object };
  additionalPrinterColumns: { name: string; jsonPath: string }[];
  schema: { openAPIV3Schema: SchemaNode };
}
interface Crd {
  spec: { scope: string; names: { kind: string }; versions: Version[] };
}

const crd = (kind: string): Crd => {
  const def = CLUSTERLINK_CRDS.find((d) => d.kind === kind);
  if (def === undefined) throw new Error(`no ClusterLink CRD ${kind}`);
  return buildCrd(def) as unknown as Crd;
};
const version = (kind: string): Version => crd(kind).spec.versions[0] as Version;
const columns = (kind: string): string[] =>
  version(kind).additionalPrinterColumns.map((c) => c.name);
const prop = (node: SchemaNode, ...names: string[]): SchemaNode =>
  names.reduce(
    (n, name) => (n["properties"] as Record<string, SchemaNode>)[name] as SchemaNode,
    node,
  );

describe("ClusterLink CRDs (clusterlink.net/v1alpha1)", () => {
  it.each([
    ["Peer", "Namespaced"],
    ["Export", "Namespaced"],
    ["Import", "Namespaced"],
    ["AccessPolicy", "Namespaced"],
    ["PrivilegedAccessPolicy", "Cluster"],
  ])("%s is %s, as upstream scopes it", (kind, scope) => {
    expect(crd(kind).spec.scope).toBe(scope);
  });

  it.each(["Peer", "Export", "Import"])(
    "%s has a status subresource and Ready, Reason, Age columns",
    (kind) => {
      expect(version(kind).subresources).toEqual({ status: {} });
      expect(columns(kind)).toEqual(expect.arrayContaining(["Ready", "Reason", "Age"]));
    },
  );

  it("Import also shows Port and TargetPort; Peer also Reachable and Since (when it last changed)", () => {
    expect(columns("Import")).toEqual(["Ready", "Reason", "Port", "TargetPort", "Age"]);
    expect(columns("Peer")).toEqual(["Ready", "Reason", "Reachable", "Since", "Age"]);
  });

  it("Import keeps upstream's name limit as a CEL rule and defaults lbScheme to round-robin", () => {
    const root = version("Import").schema.openAPIV3Schema;
    expect(root["x-kubernetes-validations"]).toEqual([
      { rule: "size(self.metadata.name) <= 63", message: "import name cannot exceed 63 chars" },
      {
        rule: "oldSelf.hasValue() || self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
        optionalOldSelf: true,
        message: expect.stringMatching(/^import name must be a DNS-1035 label/) as unknown,
      },
    ]);
    const lb = prop(root, "spec", "lbScheme");
    expect(lb["default"]).toBe("round-robin");
    expect(lb["enum"]).toEqual(["random", "round-robin", "static"]);
    expect(prop(root, "spec")["required"]).toEqual(["port"]);
    expect(prop(root, "spec", "sources")["items"]).toMatchObject({
      required: ["peer", "exportName", "exportNamespace"],
    });
  });

  it("Peer gateways need host and port; Export needs nothing (upstream marks nothing required)", () => {
    const peer = version("Peer").schema.openAPIV3Schema;
    expect(prop(peer, "spec", "gateways")["items"]).toMatchObject({ required: ["host", "port"] });
    expect(prop(version("Export").schema.openAPIV3Schema, "spec")["required"]).toBeUndefined();
  });

  it("conditions are a list map keyed by type, so status patches merge per condition", () => {
    const conditions = prop(version("Export").schema.openAPIV3Schema, "status", "conditions");
    expect(conditions["x-kubernetes-list-type"]).toBe("map");
    expect(conditions["x-kubernetes-list-map-keys"]).toEqual(["type"]);
  });
});
