import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import * as z from "zod";
import { parse } from "yaml";
import {
  ALL_CRD_DEFINITIONS,
  GENERATED_HEADER,
  renderCrdFiles,
} from "../../../shared/kinds/crds.js";
import {
  CrdSchemaError,
  structuralSchemaOf,
  type SchemaNode,
} from "../../../shared/kinds/structural-schema.js";
import { ALL_RULE_KINDS, RULE_GROUP } from "../../../shared/kinds/index.js";
import { CLUSTERLINK_SAMPLES, MANIFEST_SAMPLES, REPO_ROOT, SEED_SAMPLES } from "./yaml-docs.js";
import {
  compileObjects,
  desiredEndpointTable,
  desiredPeerSetTable,
  type RawWorld,
} from "../../../shared/netpol/index.js";

/** One endpoint with every table filled: CIDRs, excepts, ports with a range, a peer group. */
const NETPOL_SAMPLE_WORLD: RawWorld = {
  namespaces: [{ metadata: { name: "web", labels: { team: "web" } } }],
  pods: [
    {
      metadata: { name: "api", namespace: "web", uid: "u1", labels: { app: "api" } },
      spec: { containers: [{ ports: [{ name: "http", containerPort: 8080 }] }] },
      status: { phase: "Running", hostIP: "192.168.0.1", podIP: "10.0.0.1" },
    },
  ],
  policies: [
    {
      metadata: { name: "p", namespace: "web", uid: "u2" },
      spec: {
        podSelector: {},
        ingress: [
          {
            from: [
              { ipBlock: { cidr: "10.0.0.0/8", except: ["10.1.0.0/16"] } },
              { ipBlock: { cidr: "172.16.0.0/12" } },
              { podSelector: { matchLabels: { app: "api" } } },
            ],
            ports: [{ port: "http" }, { protocol: "UDP", port: 5000, endPort: 5010 }],
          },
        ],
      },
    },
  ],
};

const CRD_DIR = path.join(REPO_ROOT, "manifests/crds");
const committed = new Map(
  readdirSync(CRD_DIR)
    .filter((f) => f.endsWith(".yaml"))
    .map((f) => [f, readFileSync(path.join(CRD_DIR, f), "utf8")]),
);
const generated = renderCrdFiles();

interface Crd {
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: {
      kind: string;
      plural: string;
      singular: string;
      shortNames?: string[];
      categories?: string[];
    };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: { status?: object };
      additionalPrinterColumns: { name: string; jsonPath: string; type: string }[];
      schema: { openAPIV3Schema: SchemaNode };
    }[];
  };
}
const crds: [string, Crd][] = [...committed].map(([file, text]) => [file, parse(text) as Crd]);
const crdOfKind = (kind: string): Crd => {
  const found = crds.find(([, crd]) => crd.spec.names.kind === kind);
  if (found === undefined) throw new Error(`no CRD for ${kind}`);
  return found[1];
};

describe("committed CRDs match the generator (run `npm run gen:crds` after changing a schema)", () => {
  it("has the same set of files", () => {
    expect([...committed.keys()].sort()).toEqual([...generated.keys()].sort());
  });

  it.each([...generated.keys()])("%s is unchanged", (file) => {
    expect(committed.get(file)).toBe(generated.get(file));
    expect(committed.get(file)?.startsWith(GENERATED_HEADER)).toBe(true);
  });
});

/** Every schema node below `node` with its path, skipping value-only validations (oneOf etc.). */
function walk(node: SchemaNode, at: string, visit: (node: SchemaNode, at: string) => void): void {
  visit(node, at);
  const props = node["properties"] as Record<string, SchemaNode> | undefined;
  for (const [name, child] of Object.entries(props ?? {})) walk(child, `${at}.${name}`, visit);
  if (node["items"] !== undefined) walk(node["items"] as SchemaNode, `${at}[]`, visit);
  if (typeof node["additionalProperties"] === "object")
    walk(node["additionalProperties"] as SchemaNode, `${at}{}`, visit);
}

describe.each(crds)("CRD %s is structural and complete", (_file, crd) => {
  const version = crd.spec.versions[0];
  const root = version?.schema.openAPIV3Schema as SchemaNode;

  it("is one served, stored version named <plural>.<group>", () => {
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ served: true, storage: true });
    expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.${crd.spec.group}`);
    expect(crd.spec.names.shortNames?.length).toBeGreaterThan(0);
  });

  // Whether the API server accepts each schema as structural is checked against a real one:
  // test/integration/crd-schemas.test.ts.
  it("has a type on every node, no $ref, const or uniqueItems", () => {
    walk(root, "", (node, at) => {
      const typed =
        node["type"] !== undefined || node["x-kubernetes-preserve-unknown-fields"] === true;
      expect({ at, typed }).toEqual({ at, typed: true });
      if (node["properties"] !== undefined)
        expect({ at, additionalProperties: node["additionalProperties"] }).toEqual({ at });
      if (node["type"] === "object" && node["properties"] === undefined && at !== ".metadata") {
        const open =
          node["additionalProperties"] !== undefined ||
          node["x-kubernetes-preserve-unknown-fields"] === true;
        expect({ at, open }).toEqual({ at, open: true });
      }
      for (const key of (node["x-kubernetes-list-map-keys"] as string[] | undefined) ?? []) {
        expect((node["items"] as SchemaNode)["required"]).toContain(key);
      }
    });
    expect(JSON.stringify(root)).not.toMatch(
      /"\$ref"|"\$schema"|"const"|"uniqueItems"|"propertyNames"|"nullable"/,
    );
  });

  it("describes every field under spec and status (not scalar list items), so kubectl explain has something to say", () => {
    walk(root, "", (node, at) => {
      const scalarElement = /(\[\]|\{\})$/.test(at) && node["type"] !== "object";
      if (/^\.(spec|status)/.test(at) && !scalarElement)
        expect({ at, description: typeof node["description"] }).toEqual({
          at,
          description: "string",
        });
    });
    expect(root["description"]).toEqual(expect.any(String));
  });

  it("declares apiVersion, kind and metadata like every Kubernetes object", () => {
    expect(root["type"]).toBe("object");
    expect(Object.keys(root["properties"] as object).slice(0, 3)).toEqual([
      "apiVersion",
      "kind",
      "metadata",
    ]);
  });
});

describe.each(ALL_RULE_KINDS.map((e) => [e.kind, e] as const))("the %s CRD", (kind, entry) => {
  const crd = crdOfKind(kind);
  const version = crd.spec.versions[0];

  it("is namespaced in batch.sdewan.akraino.org with the registry's names, status subresource and category sdewan", () => {
    expect(crd.spec).toMatchObject({
      group: RULE_GROUP,
      scope: "Namespaced",
      names: {
        kind,
        plural: entry.plural,
        singular: entry.singular,
        shortNames: [...entry.shortNames],
        categories: ["sdewan"],
      },
    });
    expect(version?.name).toBe("v1alpha1");
    expect(version?.subresources).toEqual({ status: {} });
  });

  it("prints Purpose, InSync, Applied and Age", () => {
    const columns = version?.additionalPrinterColumns.filter((c) => !("priority" in c)) ?? [];
    expect(columns.map((c) => [c.name, c.jsonPath, c.type])).toEqual([
      ["Purpose", ".metadata.labels.sdewanPurpose", "string"],
      ["InSync", ".status.inSync", "boolean"],
      ["Applied", ".status.appliedTime", "date"],
      ["Age", ".metadata.creationTimestamp", "date"],
    ]);
  });

  it("has the shared status with Ready/Reconciling/Stalled conditions keyed by type", () => {
    const status = (version?.schema.openAPIV3Schema["properties"] as Record<string, SchemaNode>)[
      "status"
    ] as SchemaNode;
    const props = status["properties"] as Record<string, SchemaNode>;
    expect(Object.keys(props)).toEqual([
      "appliedVersion",
      "appliedGeneration",
      "appliedTime",
      "inSync",
      "observedGeneration",
      "driftRepairs",
      "driftSince",
      "conditions",
      "message",
    ]);
    const conditions = props["conditions"] as SchemaNode;
    expect(conditions["x-kubernetes-list-type"]).toBe("map");
    const type = ((conditions["items"] as SchemaNode)["properties"] as Record<string, SchemaNode>)[
      "type"
    ];
    expect(type?.["enum"]).toEqual(["Ready", "Reconciling", "Stalled"]);
  });
});

describe("the egress CRDs", () => {
  it("EgressGroup: cluster-scoped in sdewan.akraino.org, members under status, no status subresource", () => {
    const crd = crdOfKind("EgressGroup");
    expect(crd.spec).toMatchObject({
      group: "sdewan.akraino.org",
      scope: "Cluster",
      names: { plural: "egressgroups" },
    });
    expect(crd.spec.versions[0]?.subresources).toBeUndefined();
    const status = (
      crd.spec.versions[0]?.schema.openAPIV3Schema["properties"] as Record<string, SchemaNode>
    )["status"] as SchemaNode;
    const member = ((status["properties"] as Record<string, SchemaNode>)["members"] as SchemaNode)[
      "items"
    ] as SchemaNode;
    expect(Object.keys(member["properties"] as object)).toEqual(["pod", "nodeName", "ips"]);
  });

  it("Egress: Antrea's crd.antrea.io/v1beta1, cluster-scoped, short name eg, status subresource, EgressIP/Age/Node columns", () => {
    const crd = crdOfKind("Egress");
    expect(crd.spec).toMatchObject({
      group: "crd.antrea.io",
      scope: "Cluster",
      names: { plural: "egresses", shortNames: ["eg"] },
    });
    expect(crd.spec.versions[0]).toMatchObject({ name: "v1beta1", subresources: { status: {} } });
    expect(crd.spec.versions[0]?.additionalPrinterColumns.map((c) => [c.name, c.jsonPath])).toEqual(
      [
        ["EgressIP", ".status.egressIP"],
        ["Age", ".metadata.creationTimestamp"],
        ["Node", ".status.egressNode"],
      ],
    );
    const spec = (
      crd.spec.versions[0]?.schema.openAPIV3Schema["properties"] as Record<string, SchemaNode>
    )["spec"] as SchemaNode;
    expect(spec["required"]).toEqual(["appliedTo"]);
    expect(spec["oneOf"]).toHaveLength(2);
  });

  it("covers every definition", () => {
    expect(ALL_CRD_DEFINITIONS.map((d) => d.kind)).toEqual([
      ...ALL_RULE_KINDS.map((e) => e.kind),
      "EgressGroup",
      "Egress",
      "NetworkPolicyEndpoint",
      "NetworkPolicyPeerSet",
      "Peer",
      "Export",
      "Import",
      "AccessPolicy",
      "PrivilegedAccessPolicy",
    ]);
  });
});

/** The schema with every description removed: what is left is what the API server enforces. */
function withoutDescriptions(node: SchemaNode): SchemaNode {
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "description") continue;
    if (key === "properties")
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, SchemaNode>).map(([name, child]) => [
          name,
          withoutDescriptions(child),
        ]),
      );
    else if (key === "items" || (key === "additionalProperties" && typeof value === "object"))
      out[key] = withoutDescriptions(value as SchemaNode);
    else out[key] = value;
  }
  return out;
}

// Written by hand from what the objects mean, not from the generator's output: a change to the
// generator or to a zod schema that alters what the API server enforces fails here.
const nonEmptyString = { type: "string", minLength: 1 };
const count = { type: "integer", minimum: 0 };
const EXPECTED_EGRESS_GROUP_SCHEMA = {
  type: "object",
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object" },
    status: {
      type: "object",
      properties: {
        members: {
          type: "array",
          items: {
            type: "object",
            properties: {
              pod: {
                type: "object",
                properties: { name: nonEmptyString, namespace: nonEmptyString },
                required: ["name", "namespace"],
              },
              nodeName: { type: "string" },
              ips: { type: "array", items: { type: "string" } },
            },
            required: ["pod", "ips"],
          },
        },
        memberCount: count,
        observedEgressGeneration: count,
        conditions: {
          type: "array",
          items: {
            type: "object",
            properties: {
              type: nonEmptyString,
              status: { type: "string", enum: ["True", "False", "Unknown"] },
              reason: nonEmptyString,
              message: { type: "string" },
              lastTransitionTime: { type: "string", format: "date-time" },
              observedGeneration: count,
            },
            required: ["type", "status", "reason", "message", "lastTransitionTime"],
          },
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["type"],
        },
      },
      required: ["members", "memberCount"],
    },
  },
};

const portString = { type: "string", maxLength: 5, pattern: "^[0-9]+$" };
const EXPECTED_CNF_SERVICE_SPEC = {
  type: "object",
  properties: {
    fullname: {
      type: "string",
      maxLength: 253,
      pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
    },
    port: portString,
    dport: portString,
  },
  required: ["fullname", "port", "dport"],
};

describe("generated schemas equal hand-written ones (descriptions aside)", () => {
  const schemaOf = (kind: string): SchemaNode =>
    crdOfKind(kind).spec.versions[0]?.schema.openAPIV3Schema as SchemaNode;

  it("EgressGroup, the whole schema", () => {
    expect(withoutDescriptions(schemaOf("EgressGroup"))).toEqual(EXPECTED_EGRESS_GROUP_SCHEMA);
  });

  it("CNFService, its spec", () => {
    const props = schemaOf("CNFService")["properties"] as Record<string, SchemaNode>;
    expect(withoutDescriptions(props["spec"] as SchemaNode)).toEqual(EXPECTED_CNF_SERVICE_SPEC);
  });
});

/** A small validator for the structural subset, to show the CRD accepts what the zod schema accepts. */
function violations(node: SchemaNode, value: unknown, at = ""): string[] {
  const type = node["type"];
  const kindOf = Array.isArray(value)
    ? "array"
    : Number.isInteger(value)
      ? "integer"
      : typeof value;
  if (type !== undefined && type !== kindOf && !(type === "number" && kindOf === "integer"))
    return [`${at}: ${kindOf} is not ${typeof type === "string" ? type : JSON.stringify(type)}`];
  const out: string[] = [];
  if (Array.isArray(node["enum"]) && !node["enum"].includes(value)) out.push(`${at}: not in enum`);
  if (typeof node["pattern"] === "string" && !new RegExp(node["pattern"]).test(String(value)))
    out.push(`${at}: pattern`);
  if (typeof node["minLength"] === "number" && String(value).length < node["minLength"])
    out.push(`${at}: minLength`);
  if (typeof node["maxLength"] === "number" && String(value).length > node["maxLength"])
    out.push(`${at}: maxLength`);
  if (typeof node["maximum"] === "number" && (value as number) > node["maximum"])
    out.push(`${at}: maximum`);
  if (typeof node["minimum"] === "number" && (value as number) < node["minimum"])
    out.push(`${at}: minimum`);
  if (Array.isArray(value)) {
    if (typeof node["minItems"] === "number" && value.length < node["minItems"])
      out.push(`${at}: minItems`);
    value.forEach((item, i) =>
      out.push(...violations(node["items"] as SchemaNode, item, `${at}[${i}]`)),
    );
  } else if (kindOf === "object") {
    const record = value as Record<string, unknown>;
    for (const required of (node["required"] as string[] | undefined) ?? [])
      if (!(required in record)) out.push(`${at}.${required}: required`);
    const props = node["properties"] as Record<string, SchemaNode> | undefined;
    for (const [key, child] of Object.entries(record)) {
      const schema = props?.[key] ?? (node["additionalProperties"] as SchemaNode | undefined);
      if (schema === undefined) {
        if (props !== undefined) out.push(`${at}.${key}: unknown field (pruned)`);
      } else out.push(...violations(schema, child, `${at}.${key}`));
    }
  }
  return out;
}

describe("the CRD schemas accept every sample the zod schemas accept", () => {
  it.each(
    [...SEED_SAMPLES, ...MANIFEST_SAMPLES, ...CLUSTERLINK_SAMPLES]
      .filter((d) => d.value["kind"] !== "Deployment")
      .map(
        (d) =>
          [
            `${String(d.value["kind"])} ${(d.value["metadata"] as { name: string }).name} (${d.file})`,
            d.value,
          ] as const,
      ),
  )("%s", (_title, value) => {
    const crd = crdOfKind(String(value["kind"]));
    expect(violations(crd.spec.versions[0]?.schema.openAPIV3Schema as SchemaNode, value)).toEqual(
      [],
    );
  });

  it("accept the NetworkPolicyEndpoint and NetworkPolicyPeerSet objects network-policy-sync writes", () => {
    const compiled = compileObjects(NETPOL_SAMPLE_WORLD);
    const objects = [
      ...compiled.endpoints.map((e) => desiredEndpointTable(e).object),
      ...compiled.peerSets.map((p) => desiredPeerSetTable(p).object),
    ];
    expect(objects.map((o) => o["kind"])).toEqual([
      "NetworkPolicyEndpoint",
      "NetworkPolicyPeerSet",
    ]);
    for (const object of objects) {
      const crd = crdOfKind(String(object["kind"]));
      expect(
        violations(crd.spec.versions[0]?.schema.openAPIV3Schema as SchemaNode, object),
      ).toEqual([]);
    }
  });

  it("and reject what the API server should reject before admission runs", () => {
    const root = crdOfKind("Mwan3Policy").spec.versions[0]?.schema.openAPIV3Schema as SchemaNode;
    const bad = {
      apiVersion: "x",
      kind: "Mwan3Policy",
      metadata: {},
      spec: { members: [{ network: "a", metric: "2", weight: 0 }] },
    };
    expect(violations(root, bad)).toEqual([
      ".spec.members[0].metric: string is not integer",
      ".spec.members[0].weight: minimum",
    ]);
  });
});

describe("the zod -> structural conversion refuses what the API server would reject", () => {
  it.each([
    ["a union of types", z.object({ a: z.union([z.string(), z.number()]) }), "is not one type"],
    [
      "a union of objects",
      z.object({ a: z.union([z.object({ b: z.string() }), z.object({ c: z.string() })]) }),
      "anyOf with types",
    ],
    ["an unknown/any field", z.object({ a: z.unknown() }), "no type"],
    ["a lookahead pattern", z.object({ a: z.string().regex(/^(?!x)/) }), "not RE2"],
    ["a nullable field", z.object({ a: z.string().nullable() }), "nullable?"],
  ] as const)("%s", (_what, schema, fragment) => {
    expect(() => structuralSchemaOf(schema)).toThrow(CrdSchemaError);
    expect(() => structuralSchemaOf(schema)).toThrow(fragment);
  });

  it("turns literals into enums, drops JSON Schema bookkeeping and the safe-integer bounds of z.int()", () => {
    expect(
      structuralSchemaOf(
        z.object({ t: z.literal("SNAT"), n: z.int(), m: z.record(z.string(), z.string()) }),
      ),
    ).toEqual({
      type: "object",
      properties: {
        t: { type: "string", enum: ["SNAT"] },
        n: { type: "integer" },
        m: { type: "object", additionalProperties: { type: "string" } },
      },
      required: ["t", "n", "m"],
    });
  });
});
