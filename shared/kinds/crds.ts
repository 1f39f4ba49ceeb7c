/**
 * CustomResourceDefinitions generated from the same zod schemas the functions use (DESIGN.md §3):
 * apiextensions.k8s.io/v1, with descriptions for `kubectl explain`; the zod -> structural OpenAPI
 * conversion is structural-schema.ts.
 * Pure: builds objects and YAML text; scripts/gen-crds.ts writes them to manifests/crds/.
 */
import type * as z from "zod";
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
} from "./egress.js";
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
} from "./netpol.js";
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
} from "./clusterlink.js";
import { ALL_RULE_KINDS } from "./registry.js";
import { structuralSchemaOf, type SchemaNode } from "./structural-schema.js";

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
  "# Generated by `npm run gen:crds` from shared/kinds (scripts/gen-crds.ts). Do not edit.\n";

/** manifests/crds/<file> -> YAML text, for every CRD. */
export function renderCrdFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const def of ALL_CRD_DEFINITIONS) {
    const text = stringify(buildCrd(def), { lineWidth: 0, aliasDuplicateObjects: false });
    files.set(`${def.group}_${def.plural}.yaml`, GENERATED_HEADER + text);
  }
  return files;
}
