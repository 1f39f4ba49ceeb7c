// manifests/samples/clusterlink: one sample of every ClusterLink kind, telling one story (two
// Peers, an Export, an Import of it from both, the policies), each one the functions and the
// webhook accept as it is. The CRD schemas accept them too: test/unit/kinds/crds.test.ts, and the
// real API server with strict field validation: test/integration/crd-schemas.test.ts.
import { planAdmission } from "../../../shared/admission/plan-admission.js";
import { EMPTY_SNAPSHOT } from "../../../shared/admission/snapshot.js";
import {
  accessPolicySpecSchema,
  CLUSTERLINK_KINDS,
  DEFAULT_CL_NAMESPACE,
  exportSpecSchema,
  importSpecSchema,
  peerSpecSchema,
} from "../../../shared/clusterlink/index.js";
import { requestOf } from "../admission/fixtures.js";
import { CLUSTERLINK_SAMPLES, type YamlDoc } from "../kinds/yaml-docs.js";

const SPEC_SCHEMAS = {
  Peer: peerSpecSchema,
  Export: exportSpecSchema,
  Import: importSpecSchema,
  AccessPolicy: accessPolicySpecSchema,
  PrivilegedAccessPolicy: accessPolicySpecSchema,
} as const;

const kindOf = (d: YamlDoc): string => String(d.value["kind"]);
const nameOf = (d: YamlDoc): string => (d.value["metadata"] as { name: string }).name;
const titled = CLUSTERLINK_SAMPLES.map(
  (d) => [`${kindOf(d)} ${nameOf(d)} (${d.file})`, d] as const,
);

it("holds a sample of every ClusterLink kind, all of clusterlink.net/v1alpha1", () => {
  expect(new Set(CLUSTERLINK_SAMPLES.map(kindOf))).toEqual(new Set(Object.keys(CLUSTERLINK_KINDS)));
  for (const d of CLUSTERLINK_SAMPLES)
    expect(d.value["apiVersion"]).toBe("clusterlink.net/v1alpha1");
});

it.each(titled)("%s: its spec parses as the functions parse it, nothing dropped", (_t, d) => {
  const schema = SPEC_SCHEMAS[kindOf(d) as keyof typeof SPEC_SCHEMAS];
  const parsed = schema.safeParse(d.value["spec"]);
  if (!parsed.success) throw new Error(parsed.error.message);
  expect(parsed.data).toEqual(d.value["spec"]);
});

it.each(titled)("%s: the webhook's clusterlink-spec admits it", (_t, d) => {
  const metadata = d.value["metadata"] as { name: string; namespace?: string };
  const verdict = planAdmission(
    requestOf({
      operation: "CREATE",
      kind: kindOf(d),
      group: "clusterlink.net",
      name: metadata.name,
      namespace: metadata.namespace ?? "app",
      object: { ...d.value, metadata: { namespace: "app", ...metadata } },
    }),
    EMPTY_SNAPSHOT,
  );
  expect(verdict).toMatchObject({ allowed: true });
});

it("the Peers are in the default ClusterLink namespace, and the Import's sources name them", () => {
  const peers = CLUSTERLINK_SAMPLES.filter((d) => kindOf(d) === "Peer");
  for (const p of peers) {
    expect((p.value["metadata"] as { namespace?: string }).namespace).toBe(DEFAULT_CL_NAMESPACE);
  }
  const imported = CLUSTERLINK_SAMPLES.find((d) => kindOf(d) === "Import");
  const sources = (imported?.value["spec"] as { sources: { peer: string }[] }).sources;
  expect(sources.map((s) => s.peer).sort()).toEqual(peers.map(nameOf).sort());
});

it("applied together in one namespace, the Import's Service does not take the exported Service's name", () => {
  const named = (kind: string) => CLUSTERLINK_SAMPLES.filter((d) => kindOf(d) === kind).map(nameOf);
  // An Export's Service is named like the Export; an Import makes a Service named like itself.
  expect(named("Import").filter((name) => named("Export").includes(name))).toEqual([]);
});
