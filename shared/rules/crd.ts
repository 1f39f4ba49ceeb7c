/**
 * CustomResourceDefinitions generated from the same zod schemas the functions use (DESIGN.md §3):
 * apiextensions.k8s.io/v1, structural OpenAPI v3 schemas with descriptions for `kubectl explain`.
 * Pure: builds objects and YAML text; scripts/gen-crds.ts writes them to manifests/crds/.
 */
import * as z from "zod";
import { stringify } from "yaml";
import { RULE_GROUP, RULE_VERSION, ruleStatusSchema } from "./common.js";
import type { RuleKindEntry } from "./entry.js";
import {
  EGRESS_API_GROUP,
  EGRESS_GROUP_API_GROUP,
  EGRESS_GROUP_KIND,
  EGRESS_GROUP_PLURAL,
  EGRESS_GROUP_VERSION,
  EGRESS_KIND,
  EGRESS_PLURAL,
  EGRESS_VERSION,
  egressGroupStatusSchema,
  egressSpecSchema,
  egressStatusSchema,
} from "./egress-kinds.js";
import {
  NETPOL_API_GROUP,
  NETPOL_ENDPOINT_KIND,
  NETPOL_ENDPOINT_PLURAL,
  NETPOL_PEER_SET_KIND,
  NETPOL_PEER_SET_PLURAL,
  NETPOL_VERSION,
  endpointSpecSchema,
  endpointStatusSchema,
  peerSetSpecSchema,
  peerSetStatusSchema,
} from "./netpol-kinds.js";
import {
  accessPolicySpecSchema,
  CLUSTERLINK_GROUP,
  CLUSTERLINK_KINDS,
  CLUSTERLINK_VERSION,
  clusterLinkStatusSchema,
  exportSpecSchema,
  IMPORT_NAME_RULE,
  IMPORT_SERVICE_NAME_RULE,
  importSpecSchema,
  peerSpecSchema,
  peerStatusSchema,
  type ClusterLinkKind,
} from "./clusterlink-kinds.js";
import { ALL_RULE_KINDS } from "./registry.js";

/** A JSON Schema / OpenAPI v3 node, as plain data. */
export type SchemaNode = { [key: string]: unknown };

export interface PrinterColumn {
  readonly name: string;
  readonly type: "string" | "boolean" | "integer" | "number" | "date";
  readonly jsonPath: string;
  readonly description?: string;
  readonly priority?: number;
}

/** Everything one CRD is made from. */
export interface CrdDefinition {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly scope: "Namespaced" | "Cluster";
  readonly description: string;
  /** Top-level fields besides apiVersion/kind/metadata (spec, status), as zod schemas. */
  readonly fields: Readonly<Record<string, z.ZodType>>;
  readonly requiredFields: readonly string[];
  readonly statusSubresource: boolean;
  readonly printerColumns: readonly PrinterColumn[];
  /** CEL rules on the whole object (x-kubernetes-validations at the root), e.g. a name limit. */
  readonly validations?: readonly CelRule[];
  /** Fields a list may filter on with a fieldSelector (selectableFields), e.g. ".spec.targetPort". */
  readonly selectableFields?: readonly string[];
}

export interface CelRule {
  readonly rule: string;
  readonly message: string;
  /** The rule also runs on create, with `oldSelf` absent (a CEL optional). */
  readonly optionalOldSelf?: boolean;
}

export const SDEWAN_CATEGORY = "sdewan";

const RULE_PRINTER_COLUMNS: readonly PrinterColumn[] = [
  {
    name: "Purpose",
    type: "string",
    jsonPath: ".metadata.labels.sdewanPurpose",
    description: "sdewanPurpose label: the CNF this rule belongs to.",
  },
  {
    name: "InSync",
    type: "boolean",
    jsonPath: ".status.inSync",
    description: "Every ready CNF pod holds the rule.",
  },
  {
    name: "Applied",
    type: "date",
    jsonPath: ".status.appliedTime",
    description: "When the rule was last applied to every CNF pod.",
  },
  {
    name: "Version",
    type: "string",
    jsonPath: ".status.appliedVersion",
    description: "resourceVersion that was applied.",
    priority: 1,
  },
  {
    name: "Message",
    type: "string",
    jsonPath: ".status.message",
    description: "Latest error or progress note.",
    priority: 1,
  },
  { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
];

export function ruleKindCrd(entry: RuleKindEntry): CrdDefinition {
  return {
    group: RULE_GROUP,
    version: RULE_VERSION,
    kind: entry.kind,
    plural: entry.plural,
    singular: entry.singular,
    shortNames: entry.shortNames,
    categories: [SDEWAN_CATEGORY],
    scope: "Namespaced",
    description: entry.description,
    fields: { spec: entry.specSchema, status: ruleStatusSchema },
    requiredFields: ["spec"],
    statusSubresource: true,
    printerColumns: RULE_PRINTER_COLUMNS,
  };
}

export const EGRESS_GROUP_CRD: CrdDefinition = {
  group: EGRESS_GROUP_API_GROUP,
  version: EGRESS_GROUP_VERSION,
  kind: EGRESS_GROUP_KIND,
  plural: EGRESS_GROUP_PLURAL,
  singular: EGRESS_GROUP_KIND.toLowerCase(),
  shortNames: ["egrp"],
  categories: [SDEWAN_CATEGORY],
  scope: "Cluster",
  description:
    "EgressGroup lists the Pods an Antrea Egress of the same name selects. Written by egress-group-sync, owned by the Egress; no spec, no status subresource.",
  fields: { status: egressGroupStatusSchema },
  requiredFields: [],
  statusSubresource: false,
  printerColumns: [
    {
      name: "Members",
      type: "integer",
      jsonPath: ".status.memberCount",
      description: "Number of member Pods.",
    },
    {
      name: "EgressGeneration",
      type: "integer",
      jsonPath: ".status.observedEgressGeneration",
      priority: 1,
    },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
};

/** Antrea's Egress, for clusters and tests without Antrea (reference A.1-A.2). */
export const EGRESS_CRD: CrdDefinition = {
  group: EGRESS_API_GROUP,
  version: EGRESS_VERSION,
  kind: EGRESS_KIND,
  plural: EGRESS_PLURAL,
  singular: EGRESS_KIND.toLowerCase(),
  shortNames: ["eg"],
  categories: [],
  scope: "Cluster",
  description:
    "Egress makes the selected Pods' traffic leave the cluster with a chosen SNAT IP (Antrea).",
  fields: { spec: egressSpecSchema, status: egressStatusSchema },
  requiredFields: ["spec"],
  statusSubresource: true,
  printerColumns: [
    { name: "EgressIP", type: "string", jsonPath: ".status.egressIP" },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    { name: "Node", type: "string", jsonPath: ".status.egressNode" },
  ],
};

/** network-policy-sync's per-endpoint tables (ADR 0005). */
export const NETPOL_ENDPOINT_CRD: CrdDefinition = {
  group: NETPOL_API_GROUP,
  version: NETPOL_VERSION,
  kind: NETPOL_ENDPOINT_KIND,
  plural: NETPOL_ENDPOINT_PLURAL,
  singular: NETPOL_ENDPOINT_KIND.toLowerCase(),
  shortNames: ["npep"],
  categories: [SDEWAN_CATEGORY],
  scope: "Namespaced",
  description:
    "NetworkPolicyEndpoint holds the ingress and egress bitmap tables of the Pod of the same name, compiled by network-policy-sync from every NetworkPolicy selecting it. Owned by the Pod; no status subresource.",
  fields: { spec: endpointSpecSchema, status: endpointStatusSchema },
  requiredFields: ["spec"],
  statusSubresource: false,
  printerColumns: [
    {
      name: "IngressIsolated",
      type: "boolean",
      jsonPath: ".spec.ingress.isolated",
      description: "A policy restricts ingress.",
    },
    {
      name: "EgressIsolated",
      type: "boolean",
      jsonPath: ".spec.egress.isolated",
      description: "A policy restricts egress.",
    },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
};

/** The address groups of one NetworkPolicy, shared by all its endpoints (ADR 0005). */
export const NETPOL_PEER_SET_CRD: CrdDefinition = {
  group: NETPOL_API_GROUP,
  version: NETPOL_VERSION,
  kind: NETPOL_PEER_SET_KIND,
  plural: NETPOL_PEER_SET_PLURAL,
  singular: NETPOL_PEER_SET_KIND.toLowerCase(),
  shortNames: ["npps"],
  categories: [SDEWAN_CATEGORY],
  scope: "Namespaced",
  description:
    "NetworkPolicyPeerSet lists the Pod addresses each rule of the NetworkPolicy of the same name selects by labels, compiled by network-policy-sync. Owned by the NetworkPolicy; no status subresource.",
  fields: { spec: peerSetSpecSchema, status: peerSetStatusSchema },
  requiredFields: ["spec"],
  statusSubresource: false,
  printerColumns: [{ name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }],
};

// ---- ClusterLink (clusterlink.net/v1alpha1, reference B.1)

const CLUSTERLINK_CATEGORY = "clusterlink";

const conditionColumn = (
  name: string,
  type: string,
  field: "status" | "reason",
): PrinterColumn => ({
  name,
  type: "string",
  jsonPath: `.status.conditions[?(@.type=="${type}")].${field}`,
});

const RECONCILE_COLUMNS: readonly PrinterColumn[] = [
  conditionColumn("Ready", "Ready", "status"),
  conditionColumn("Reason", "Ready", "reason"),
];
const AGE_COLUMN: PrinterColumn = {
  name: "Age",
  type: "date",
  jsonPath: ".metadata.creationTimestamp",
};

/** clusterlink-authz writes PolicyValid only on a policy it found it cannot evaluate (or fixed). */
const POLICY_COLUMNS: readonly PrinterColumn[] = [
  { name: "Action", type: "string", jsonPath: ".spec.action" },
  conditionColumn("Valid", "PolicyValid", "status"),
  conditionColumn("Reason", "PolicyValid", "reason"),
  AGE_COLUMN,
];

/** Prefixed so `kubectl get` never confuses them with another project's Peer or Export. */
const CLUSTERLINK_SHORT_NAMES: Readonly<Record<ClusterLinkKind, string>> = {
  Peer: "clpeer",
  Export: "clexport",
  Import: "climport",
  AccessPolicy: "clap",
  PrivilegedAccessPolicy: "clpap",
};

function clusterLinkCrd(
  kind: ClusterLinkKind,
  description: string,
  fields: Readonly<Record<string, z.ZodType>>,
  columns: readonly PrinterColumn[],
  extra: Partial<CrdDefinition> = {},
): CrdDefinition {
  const { plural, namespaced } = CLUSTERLINK_KINDS[kind];
  return {
    group: CLUSTERLINK_GROUP,
    version: CLUSTERLINK_VERSION,
    kind,
    plural,
    singular: kind.toLowerCase(),
    shortNames: [CLUSTERLINK_SHORT_NAMES[kind]],
    categories: [CLUSTERLINK_CATEGORY],
    scope: namespaced ? "Namespaced" : "Cluster",
    description,
    fields,
    requiredFields: ["spec"],
    statusSubresource: fields["status"] !== undefined,
    printerColumns: columns,
    ...extra,
  };
}

export const CLUSTERLINK_CRDS: readonly CrdDefinition[] = [
  clusterLinkCrd(
    "Peer",
    "Peer is a remote ClusterLink cluster and its gateways; watched only in the ClusterLink namespace.",
    { spec: peerSpecSchema, status: peerStatusSchema },
    [
      ...RECONCILE_COLUMNS,
      conditionColumn("Reachable", "PeerReachable", "status"),
      // Since when reachable (or not): a per-beat "last seen" would be a write per beat.
      {
        name: "Since",
        type: "date",
        jsonPath: '.status.conditions[?(@.type=="PeerReachable")].lastTransitionTime',
      },
      AGE_COLUMN,
    ],
  ),
  clusterLinkCrd(
    "Export",
    "Export makes a local Service (or an external host) available to remote peers.",
    { spec: exportSpecSchema, status: clusterLinkStatusSchema },
    [...RECONCILE_COLUMNS, AGE_COLUMN],
  ),
  clusterLinkCrd(
    "Import",
    "Import makes remote exports available in this namespace as a Service named like the Import.",
    { spec: importSpecSchema, status: clusterLinkStatusSchema },
    [
      ...RECONCILE_COLUMNS,
      { name: "Port", type: "integer", jsonPath: ".spec.port" },
      { name: "TargetPort", type: "integer", jsonPath: ".spec.targetPort" },
      AGE_COLUMN,
    ],
    // Leases are checked per port: "which Imports hold port P" is one small list.
    {
      validations: [IMPORT_NAME_RULE, IMPORT_SERVICE_NAME_RULE],
      selectableFields: [".spec.targetPort"],
    },
  ),
  clusterLinkCrd(
    "AccessPolicy",
    "AccessPolicy allows or denies connections to and from workloads of its namespace.",
    { spec: accessPolicySpecSchema, status: clusterLinkStatusSchema },
    POLICY_COLUMNS,
  ),
  clusterLinkCrd(
    "PrivilegedAccessPolicy",
    "PrivilegedAccessPolicy is a cluster-wide AccessPolicy, evaluated before every AccessPolicy.",
    { spec: accessPolicySpecSchema, status: clusterLinkStatusSchema },
    POLICY_COLUMNS,
  ),
];

/** Every CRD this project ships, rule kinds first in apply order. */
export const ALL_CRD_DEFINITIONS: readonly CrdDefinition[] = [
  ...ALL_RULE_KINDS.map(ruleKindCrd),
  EGRESS_GROUP_CRD,
  EGRESS_CRD,
  NETPOL_ENDPOINT_CRD,
  NETPOL_PEER_SET_CRD,
  ...CLUSTERLINK_CRDS,
];

// ---- zod JSON Schema -> structural OpenAPI v3

/** Keywords the API server accepts in a structural schema, in the order they are written. */
const KEY_ORDER = [
  "description",
  "type",
  "default",
  "format",
  "enum",
  "minimum",
  "exclusiveMinimum",
  "maximum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "items",
  "properties",
  "required",
  "additionalProperties",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "x-kubernetes-int-or-string",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-list-type",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-map-type",
  "x-kubernetes-validations",
] as const;

/** zod output we drop: JSON Schema bookkeeping the API server does not know. */
const DROPPED = new Set(["$schema", "title", "propertyNames"]);

/** Formats the API server understands (k8s.io/kube-openapi strfmt); others would be rejected as meaningless. */
const KNOWN_FORMATS = new Set([
  "date-time",
  "date",
  "int32",
  "int64",
  "byte",
  "uuid",
  "hostname",
  "ipv4",
  "ipv6",
  "cidr",
  "mac",
  "uri",
  "email",
]);

const STRUCTURAL_TYPES = new Set<unknown>([
  "object",
  "array",
  "string",
  "integer",
  "number",
  "boolean",
]);

const SAFE_LIMITS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);

/** RE2 (the API server's regexp) has no lookaround and no backreferences. */
const NON_RE2 = /\(\?[=!<]|\\[1-9]/;

export class CrdSchemaError extends Error {
  override readonly name = "CrdSchemaError";
}

function isNode(value: unknown): value is SchemaNode {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a oneOf/anyOf/allOf/not branch only constrains which fields are present. */
function isPresenceOnly(node: unknown): boolean {
  if (!isNode(node)) return false;
  return Object.entries(node).every(([k, v]) =>
    k === "required"
      ? Array.isArray(v)
      : ["oneOf", "anyOf", "allOf"].includes(k)
        ? Array.isArray(v) && v.every(isPresenceOnly)
        : k === "not" && isPresenceOnly(v),
  );
}

function convertBounds(node: SchemaNode, out: SchemaNode): void {
  for (const [key, exclusive] of [
    ["minimum", "exclusiveMinimum"],
    ["maximum", "exclusiveMaximum"],
  ] as const) {
    const inclusive = node[key];
    const strict = node[exclusive];
    if (typeof strict === "number") {
      out[key] = strict;
      out[exclusive] = true; // OpenAPI v3.0 form: a boolean beside the bound
    } else if (typeof inclusive === "number" && !SAFE_LIMITS.has(inclusive)) {
      out[key] = inclusive;
    }
  }
}

function convertAdditional(node: SchemaNode, out: SchemaNode, path: string): void {
  const extra = node["additionalProperties"];
  if (extra === undefined || extra === false || node["properties"] !== undefined) return; // unknown fields are pruned
  if (extra === true || (isNode(extra) && Object.keys(extra).length === 0)) {
    out["x-kubernetes-preserve-unknown-fields"] = true;
    return;
  }
  out["additionalProperties"] = toStructural(extra, `${path}.additionalProperties`);
}

type KeywordHandler = (value: unknown, node: SchemaNode, out: SchemaNode, path: string) => void;

const presenceOnly =
  (key: string): KeywordHandler =>
  (value, _node, out, path) => {
    if (!(Array.isArray(value) ? value.every(isPresenceOnly) : isPresenceOnly(value))) {
      throw new CrdSchemaError(
        `${path}: ${key} with types or properties is not structural (a zod union?)`,
      );
    }
    out[key] = value;
  };

const KEYWORD_HANDLERS: Readonly<Record<string, KeywordHandler>> = {
  // OpenAPI v3.0 has no const.
  const: (value, _node, out) => {
    out["enum"] = [value];
  },
  format: (value, _node, out, path) => {
    if (typeof value !== "string" || !KNOWN_FORMATS.has(value)) {
      throw new CrdSchemaError(`${path}: format ${String(value)} is not supported`);
    }
    out["format"] = value;
  },
  pattern: (value, node, out, path) => {
    if (node["format"] !== undefined) return; // zod adds a regex beside formats; the format says it
    if (typeof value !== "string" || NON_RE2.test(value)) {
      throw new CrdSchemaError(`${path}: pattern is not RE2: ${String(value)}`);
    }
    out["pattern"] = value;
  },
  oneOf: presenceOnly("oneOf"),
  anyOf: presenceOnly("anyOf"),
  allOf: presenceOnly("allOf"),
  not: presenceOnly("not"),
};

function copyPlain(node: SchemaNode, out: SchemaNode, path: string): void {
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED.has(key) || key in out) continue;
    const handler = KEYWORD_HANDLERS[key];
    if (handler !== undefined) handler(value, node, out, path);
    else if ((KEY_ORDER as readonly string[]).includes(key)) out[key] = value;
    else throw new CrdSchemaError(`${path}: keyword ${key} is not supported in a CRD schema`);
  }
}

/** One zod JSON Schema node -> a structural schema node; throws CrdSchemaError on what the API server would reject. */
export function toStructural(node: unknown, path = "schema"): SchemaNode {
  if (!isNode(node)) throw new CrdSchemaError(`${path}: not a schema object`);
  const out: SchemaNode = {};
  if (isNode(node["properties"])) {
    const props: SchemaNode = {};
    for (const [name, child] of Object.entries(node["properties"]))
      props[name] = toStructural(child, `${path}.${name}`);
    out["properties"] = props;
  }
  if (node["items"] !== undefined) out["items"] = toStructural(node["items"], `${path}[]`);
  convertBounds(node, out);
  convertAdditional(node, out, path);
  const handled = new Set([
    "properties",
    "items",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "additionalProperties",
  ]);
  copyPlain(Object.fromEntries(Object.entries(node).filter(([k]) => !handled.has(k))), out, path);
  if (out["type"] === undefined && out["x-kubernetes-preserve-unknown-fields"] !== true) {
    throw new CrdSchemaError(`${path}: no type (structural schemas need one on every node)`);
  }
  if (out["type"] !== undefined && !STRUCTURAL_TYPES.has(out["type"])) {
    throw new CrdSchemaError(
      `${path}: type ${JSON.stringify(out["type"])} is not one type (a zod union or nullable?)`,
    );
  }
  return ordered(out);
}

function ordered(node: SchemaNode): SchemaNode {
  const out: SchemaNode = {};
  for (const key of KEY_ORDER) if (node[key] !== undefined) out[key] = node[key];
  return out;
}

/** A zod schema as a structural OpenAPI v3 schema. */
export function structuralSchemaOf(schema: z.ZodType, path = "schema"): SchemaNode {
  return toStructural(
    z.toJSONSchema(schema, {
      io: "input",
      unrepresentable: "throw",
      reused: "inline",
      cycles: "throw",
    }),
    path,
  );
}

function openApiSchema(def: CrdDefinition): SchemaNode {
  const properties: SchemaNode = {
    apiVersion: {
      description: "Versioned schema of this representation of an object.",
      type: "string",
    },
    kind: { description: "REST resource this object represents.", type: "string" },
    metadata: { type: "object" },
  };
  for (const [name, schema] of Object.entries(def.fields))
    properties[name] = structuralSchemaOf(schema, `${def.kind}.${name}`);
  const root: SchemaNode = { description: def.description, type: "object", properties };
  if (def.requiredFields.length > 0) root["required"] = [...def.requiredFields];
  if (def.validations !== undefined && def.validations.length > 0) {
    root["x-kubernetes-validations"] = def.validations.map((v) => ({ ...v }));
  }
  return root;
}

/** The CustomResourceDefinition object of one definition. */
export function buildCrd(def: CrdDefinition): SchemaNode {
  const names: SchemaNode = {
    kind: def.kind,
    listKind: `${def.kind}List`,
    plural: def.plural,
    singular: def.singular,
  };
  if (def.shortNames.length > 0) names["shortNames"] = [...def.shortNames];
  if (def.categories.length > 0) names["categories"] = [...def.categories];
  const version: SchemaNode = {
    name: def.version,
    served: true,
    storage: true,
    schema: { openAPIV3Schema: openApiSchema(def) },
  };
  if (def.statusSubresource) version["subresources"] = { status: {} };
  version["additionalPrinterColumns"] = def.printerColumns.map((c) => ({ ...c }));
  if (def.selectableFields !== undefined && def.selectableFields.length > 0) {
    version["selectableFields"] = def.selectableFields.map((jsonPath) => ({ jsonPath }));
  }
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${def.plural}.${def.group}` },
    spec: { group: def.group, names, scope: def.scope, versions: [version] },
  };
}

export const GENERATED_HEADER =
  "# Generated by `npm run gen:crds` from shared/rules (scripts/gen-crds.ts). Do not edit.\n";

/** manifests/crds/<file> -> YAML text, for every CRD. */
export function renderCrdFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const def of ALL_CRD_DEFINITIONS) {
    const text = stringify(buildCrd(def), { lineWidth: 0, aliasDuplicateObjects: false });
    files.set(`${def.group}_${def.plural}.yaml`, GENERATED_HEADER + text);
  }
  return files;
}
