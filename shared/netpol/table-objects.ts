/**
 * The compiled tables as API objects and back: desired NetworkPolicyEndpoint / NetworkPolicyPeerSet
 * objects (owned by their Pod / NetworkPolicy, so the garbage collector removes them with it),
 * and stored objects reduced to what "changed?" compares: a canonical rendering of spec, status
 * and owner. Canonical means sorted keys: the API server hands custom objects back with their keys
 * sorted, so comparing our insertion order with its order would see changes that are not there.
 */
import {
  NETPOL_API_VERSION,
  NETPOL_ENDPOINT_KIND,
  NETPOL_PEER_SET_KIND,
  netpolEndpointSchema,
  netpolPeerSetSchema,
  type EndpointSpec,
  type NetpolProblem,
  type PeerSetSpec,
} from "../kinds/netpol.js";
import {
  NETPOL_LABEL_PREFIX,
  POLICY_GENERATION_ANNOTATION,
  memberIndexLabels,
} from "./member-index.js";
import type { DesiredEndpoint, DesiredPeerSet } from "./plan-tables.js";

export type TableKind = "endpoint" | "peerSet";

/**
 * On NetworkPolicyEndpoints a policy with egress named ports applies to: any Pod or Namespace
 * event may change them, and this label finds them without listing every endpoint.
 */
export const EGRESS_NAMED_PORTS_LABEL = "netpol.sdewan.akraino.org/egress-named-ports";

/**
 * On NetworkPolicyPeerSets of policies with a namespaceSelector peer: the only peer sets a
 * Namespace's labels can change, found by this label (a Namespace event reads no other).
 */
export const NAMESPACE_SELECTOR_LABEL = "netpol.sdewan.akraino.org/namespace-selector";

/**
 * On NetworkPolicyPeerSets: what their labels mean (the member index, NAMESPACE_SELECTOR_LABEL;
 * since "3", no member index on a peer set whose status says PeerSetTooLarge, peer-set-bound.ts).
 * A peer set without the current format was written by an older version: Pod and Namespace
 * events, which find peer sets by label, hand over to the full recompute, which rewrites it
 * (OLDER_PEER_SETS finds them).
 */
export const TABLE_FORMAT_LABEL = "netpol.sdewan.akraino.org/table-format";
export const TABLE_FORMAT = "3";
export const OLDER_PEER_SETS = `${TABLE_FORMAT_LABEL} notin (${TABLE_FORMAT})`;

/** The label a table kind is found by in a TableReads' `labelled` (plan-scope.ts). */
export const SCOPE_LABEL: Readonly<Record<TableKind, string>> = {
  endpoint: EGRESS_NAMED_PORTS_LABEL,
  peerSet: NAMESPACE_SELECTOR_LABEL,
};

/** A desired table object, with the canonical content the store's copy is compared with. */
export interface DesiredTable {
  readonly kind: TableKind;
  readonly namespace: string;
  readonly name: string;
  /** Carries its kind's SCOPE_LABEL. */
  readonly labelled: boolean;
  readonly object: Readonly<Record<string, unknown>> & {
    readonly metadata: {
      readonly name: string;
      readonly namespace: string;
      readonly labels?: Readonly<Record<string, string>>;
      readonly annotations?: Readonly<Record<string, string>>;
      readonly managedFields?: readonly Readonly<Record<string, never>>[];
    };
  };
  readonly content: string;
}

/** A stored table object: where it is, its version, and its canonical content. */
export interface StoredTable {
  readonly kind: TableKind;
  readonly namespace: string;
  readonly name: string;
  readonly resourceVersion: string;
  /** null when the object does not parse: it is then always rewritten. */
  readonly content: string | null;
  /** Our labels and annotations (netpol.sdewan.akraino.org/ keys only). */
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly ownerUid: string;
  /** spec and status as parsed; null when they do not parse. */
  readonly parsed: {
    readonly spec: unknown;
    readonly status: { readonly problems: readonly NetpolProblem[] };
  } | null;
}

/** JSON with object keys sorted at every level and undefined members left out. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const members = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`);
    return `{${members.join(",")}}`;
  }
  return JSON.stringify(value);
}

interface Owner {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
}

const ownerReferences = (owner: Owner): Record<string, unknown> =>
  owner.uid === "" ? {} : { ownerReferences: [{ ...owner, controller: true }] };

/** Only our own keys: others' labels and annotations on a table are theirs to keep. */
const ours = (map: Readonly<Record<string, string>> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(map ?? {}).filter(([k]) => k.startsWith(NETPOL_LABEL_PREFIX)));

const contentOf = (
  spec: unknown,
  status: unknown,
  ownerUid: string,
  labels: Readonly<Record<string, string>>,
  annotations: Readonly<Record<string, string>>,
): string => canonicalJson({ spec, status, ownerUid, labels, annotations });

export function desiredEndpointTable(desired: DesiredEndpoint): DesiredTable {
  const status = { problems: desired.problems };
  const owner = { apiVersion: "v1", kind: "Pod", name: desired.name, uid: desired.podUid };
  const labelled = desired.egressNamedPorts;
  const labels: Record<string, string> = labelled ? { [EGRESS_NAMED_PORTS_LABEL]: "true" } : {};
  return {
    kind: "endpoint",
    namespace: desired.namespace,
    name: desired.name,
    labelled,
    object: {
      apiVersion: NETPOL_API_VERSION,
      kind: NETPOL_ENDPOINT_KIND,
      metadata: {
        name: desired.name,
        namespace: desired.namespace,
        ...(labelled ? { labels } : {}),
        ...ownerReferences(owner),
      },
      spec: desired.spec,
      status,
    },
    content: contentOf(desired.spec, status, desired.podUid, labels, {}),
  };
}

/** A peer set's object from its parts; `labels` is its member index (member-index.ts). */
export function peerSetTable(
  desired: Omit<DesiredPeerSet, "members" | "namespaceSelected">,
  labels: Readonly<Record<string, string>>,
): DesiredTable {
  const status = { problems: desired.problems };
  const owner = {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    name: desired.name,
    uid: desired.policyUid,
  };
  const annotations = { [POLICY_GENERATION_ANNOTATION]: String(desired.policyGeneration) };
  return {
    kind: "peerSet",
    namespace: desired.namespace,
    name: desired.name,
    labelled: labels[NAMESPACE_SELECTOR_LABEL] === "true",
    object: {
      apiVersion: NETPOL_API_VERSION,
      kind: NETPOL_PEER_SET_KIND,
      metadata: {
        name: desired.name,
        namespace: desired.namespace,
        labels,
        annotations,
        // Only this function writes peer sets, and field ownership would list every member label
        // a second time (60 of the 154 bytes a member cost stored). [{}] stores none (as EgressGroups).
        managedFields: [{}],
        ...ownerReferences(owner),
      },
      spec: desired.spec,
      status,
    },
    content: contentOf(desired.spec, status, desired.policyUid, labels, annotations),
  };
}

/**
 * Rendered once per compiled peer set: the bound (peer-set-bound.ts) measures the table the
 * shell then writes. A memo of a pure function of an immutable value.
 */
const renderedPeerSets = new WeakMap<DesiredPeerSet, DesiredTable>();

export function desiredPeerSetTable(desired: DesiredPeerSet): DesiredTable {
  const known = renderedPeerSets.get(desired);
  if (known !== undefined) return known;
  const table = peerSetTable(desired, {
    ...memberIndexLabels(`${desired.namespace}/${desired.name}`, desired.members),
    [TABLE_FORMAT_LABEL]: TABLE_FORMAT,
    ...(desired.namespaceSelected ? { [NAMESPACE_SELECTOR_LABEL]: "true" } : {}),
  });
  renderedPeerSets.set(desired, table);
  return table;
}

/**
 * What the object costs the API server beyond its canonical content: apiVersion, kind, names,
 * the owner reference and managedFields, at most (names of 253 characters).
 */
const METADATA_BYTES = 2_048;

/** Bytes of the table's object as JSON, as it is sent to the API server and stored. */
export function tableBytes(table: DesiredTable): number {
  return Buffer.byteLength(JSON.stringify(table.object), "utf8");
}

/**
 * Whether the table's object takes at most `maxBytes`: settled by the length of its content
 * (already computed) when far enough below, else by serialising it.
 */
export function tableFits(table: DesiredTable, maxBytes: number): boolean {
  if (table.content.length + METADATA_BYTES <= maxBytes) return true;
  return tableBytes(table) <= maxBytes;
}

interface RawTable {
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly resourceVersion?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly ownerReferences?: readonly { readonly uid: string }[];
  };
}

/** A stored object as the shell compares it; `content` null if its spec/status do not parse. */
export function storedTable(
  kind: TableKind,
  object: RawTable & Record<string, unknown>,
): StoredTable {
  const schema = kind === "endpoint" ? netpolEndpointSchema : netpolPeerSetSchema;
  const parsed = schema.safeParse(object);
  const ownerUid = object.metadata.ownerReferences?.[0]?.uid ?? "";
  const labels = ours(object.metadata.labels);
  const annotations = ours(object.metadata.annotations);
  const body = parsed.success
    ? { spec: parsed.data.spec, status: parsed.data.status ?? { problems: [] } }
    : null;
  return {
    kind,
    namespace: object.metadata.namespace ?? "",
    name: object.metadata.name,
    resourceVersion: object.metadata.resourceVersion ?? "",
    content:
      body === null ? null : contentOf(body.spec, body.status, ownerUid, labels, annotations),
    labels,
    annotations,
    ownerUid,
    parsed: body,
  };
}

/**
 * Stored objects as `decide` reads them (decide.ts's StoredTables), keyed "<namespace>/<name>".
 * Objects that do not parse are left out: a missing endpoint table means "not isolated" only if
 * it was never written; the caller reports unreadable ones.
 */
export function storedTablesFromObjects(
  endpoints: readonly unknown[],
  peerSets: readonly unknown[],
): {
  endpoints: Map<string, EndpointSpec>;
  peerSets: Map<string, PeerSetSpec>;
  unreadable: number;
} {
  let unreadable = 0;
  const endpointMap = new Map<string, EndpointSpec>();
  for (const object of endpoints) {
    const parsed = netpolEndpointSchema.safeParse(object);
    if (!parsed.success) unreadable += 1;
    else
      endpointMap.set(
        `${parsed.data.metadata.namespace}/${parsed.data.metadata.name}`,
        parsed.data.spec,
      );
  }
  const peerSetMap = new Map<string, PeerSetSpec>();
  for (const object of peerSets) {
    const parsed = netpolPeerSetSchema.safeParse(object);
    if (!parsed.success) unreadable += 1;
    else
      peerSetMap.set(
        `${parsed.data.metadata.namespace}/${parsed.data.metadata.name}`,
        parsed.data.spec,
      );
  }
  return { endpoints: endpointMap, peerSets: peerSetMap, unreadable };
}
