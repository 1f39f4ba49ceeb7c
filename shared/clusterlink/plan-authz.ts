/**
 * Pure: clusterlink-authz's two decisions from what was read, never from what the caller says
 * about itself (docs/adr/0009): ingress (a remote Peer's dataplane asks; the Peer is the one the
 * verified certificate names, the Export must exist and be valid) and egress (the local
 * dataplane asks for a local client, named by its IP, whose Pod gives its attributes).
 * Where each attribute comes from: docs/code-notes.md (clusterlink/plan-authz.ts).
 */
import type { KubeObject, Pod } from "../core/objects.js";
import { peerStatusSchema, type ImportSpec } from "../kinds/clusterlink.js";
import type { ObservedExport } from "./observed.js";
import {
  ATTRIBUTES,
  decideAccess,
  type AccessDecision,
  type Attributes,
  type LivePolicy,
  type UnknownAttributes,
} from "./plan-access.js";

/** What denied before any policy was asked (upstream's `<default deny>` style). */
export const PRECONDITION = {
  unknownPeer: "<unknown peer>",
  exportNotFound: "<export not found>",
  exportNotValid: "<export not valid>",
  importNotFound: "<import not found>",
  notASource: "<not a source>",
  unknownClient: "<unknown client>",
} as const;

/** Who is calling, as the connection proves it (the runtime's CallerIdentity). */
export interface Caller {
  /** The client certificate verified against the fabric CA. */
  readonly verified: boolean;
  /** The verified certificate's DNS SANs, else its subject CN. */
  readonly names: readonly string[];
  /** Why a presented certificate was not verified. */
  readonly problem?: string;
}

/** CL_AUTHZ_UNVERIFIED: what a request without a verified client certificate may do. */
export type UnverifiedCallers = "refuse" | "on-behalf-of-peer";

/** Only the exact word trusts unverified callers; anything else (a typo included) refuses them. */
export const unverifiedCallersOf = (
  env: Readonly<Record<string, string | undefined>>,
): UnverifiedCallers =>
  env["CL_AUTHZ_UNVERIFIED"]?.trim() === "on-behalf-of-peer" ? "on-behalf-of-peer" : "refuse";

export interface Refusal {
  readonly status: 400 | 401 | 403;
  readonly error: "bad-request" | "unauthenticated" | "forbidden";
  readonly message: string;
}

const FABRIC_CERT_REQUIRED =
  "a verified client certificate of the ClusterLink fabric is required (unverified callers are refused unless CL_AUTHZ_UNVERIFIED=on-behalf-of-peer)";

/** The caller may ask at all: a verified certificate, or unverified callers trusted. */
export function refuseUnverified(
  caller: Caller | undefined,
  mode: UnverifiedCallers,
): Refusal | null {
  if (caller?.verified === true || mode === "on-behalf-of-peer") return null;
  const problem = caller?.problem === undefined ? "" : `; the one presented: ${caller.problem}`;
  return { status: 401, error: "unauthenticated", message: `${FABRIC_CERT_REQUIRED}${problem}` };
}

/**
 * The Peer an ingress request is for: the one the verified certificate names, or, from an
 * unverified caller only where CL_AUTHZ_UNVERIFIED=on-behalf-of-peer, the request's `peer`.
 */
export function ingressPeerName(
  caller: Caller | undefined,
  claimed: string | undefined,
  mode: UnverifiedCallers,
): { readonly peer: string } | Refusal {
  const refused = refuseUnverified(caller, mode);
  if (refused !== null) return refused;
  if (caller?.verified === true) {
    const names = [...new Set(caller.names)];
    const [only] = names;
    if (only === undefined || names.length > 1) {
      const which = names.length === 0 ? "no name" : `several names (${names.join(", ")})`;
      const message = `the client certificate carries ${which}: it must name one Peer (a DNS SAN, or the subject CN)`;
      return { status: 403, error: "forbidden", message };
    }
    if (claimed !== undefined && claimed !== only) {
      const message = `"peer" is taken from the client certificate (${only}); leave it out`;
      return { status: 400, error: "bad-request", message };
    }
    return { peer: only };
  }
  if (claimed === undefined) {
    const message = `"peer" is required from a caller without a client certificate: the Peer the request is made for`;
    return { status: 400, error: "bad-request", message };
  }
  return { peer: claimed };
}

/** A Peer as read: its labels from status, undefined when no heartbeat reported them yet. */
export interface PeerView {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>> | undefined;
}

export function peerViewOf(object: KubeObject): PeerView {
  const status = peerStatusSchema.safeParse(object.status ?? {});
  return { name: object.metadata.name, labels: status.success ? status.data.labels : undefined };
}

/** The Peer's attributes, and which of them nobody knows yet. */
function peerAttributes(peer: PeerView): {
  readonly attributes: Attributes;
  readonly unknown: readonly UnknownAttributes[];
} {
  const attributes: Record<string, string> = { [ATTRIBUTES.peerName]: peer.name };
  if (peer.labels === undefined) {
    const why = `the labels of Peer ${peer.name} are not known yet (no heartbeat has reported them)`;
    return { attributes, unknown: [{ prefix: ATTRIBUTES.peerLabelPrefix, why }] };
  }
  for (const [key, value] of Object.entries(peer.labels))
    attributes[`${ATTRIBUTES.peerLabelPrefix}${key}`] = value;
  return { attributes, unknown: [] };
}

const deny = (policy: string, message: string): AccessDecision => ({
  action: "deny",
  policy,
  tier: "precondition",
  message,
});

/** Why an Export cannot be accessed, or null when it is valid for its current spec. */
function exportProblem(exp: ObservedExport): string | null {
  const valid = exp.status?.conditions?.find((c) => c.type === "ExportValid");
  const at = `Export ${exp.namespace}/${exp.name}`;
  if (valid === undefined) return `${at} is not verified yet`;
  if (valid.status !== "True") return `${at} is not valid: ${valid.message}`;
  if (valid.observedGeneration !== undefined && valid.observedGeneration !== exp.generation)
    return `${at} changed and is not verified again yet`;
  return null;
}

export interface IngressObserved {
  readonly clNamespace: string;
  readonly peerName: string;
  readonly peer: PeerView | undefined;
  readonly exportRef: { readonly namespace: string; readonly name: string };
  readonly export: ObservedExport | undefined;
  /** The remote Peer's word about its client: `client.clusterlink.net/...` keys only. */
  readonly client: Attributes;
  readonly policies: readonly LivePolicy[];
}

export function planIngress(observed: IngressObserved): AccessDecision {
  const { peer, exportRef, clNamespace } = observed;
  if (peer === undefined)
    return deny(PRECONDITION.unknownPeer, `no Peer ${observed.peerName} in ${clNamespace}`);
  const exp = observed.export;
  if (exp === undefined) {
    const message = `no Export ${exportRef.namespace}/${exportRef.name}`;
    return deny(PRECONDITION.exportNotFound, message);
  }
  const problem = exportProblem(exp);
  if (problem !== null) return deny(PRECONDITION.exportNotValid, problem);
  const { attributes, unknown } = peerAttributes(peer);
  const destination: Record<string, string> = {
    [ATTRIBUTES.exportName]: exp.name,
    [ATTRIBUTES.exportNamespace]: exp.namespace,
  };
  for (const [key, value] of Object.entries(exp.labels))
    destination[`${ATTRIBUTES.exportLabelPrefix}${key}`] = value;
  return decideAccess(observed.policies, {
    source: { ...observed.client, ...attributes },
    destination,
    namespace: exp.namespace,
    unknown,
  });
}

export interface ImportSource {
  readonly peer: string;
  readonly exportName: string;
  readonly exportNamespace: string;
}

/** The local client as its Pod says, or why it cannot be told. */
export type ClientView =
  | { readonly ok: true; readonly pod: string; readonly attributes: Attributes }
  | { readonly ok: false; readonly message: string };

/** The one running Pod with this IP: none or several (host-network Pods) cannot be told apart. */
export function clientOf(pods: readonly Pod[], ip: string): ClientView {
  const live = pods.filter(
    (p) =>
      p.status?.phase !== "Succeeded" &&
      p.status?.phase !== "Failed" &&
      !p.metadata.deletionTimestamp,
  );
  const [pod] = live;
  if (pod === undefined) return { ok: false, message: `no running Pod has IP ${ip}` };
  if (live.length > 1) {
    const names = live.map((p) => `${p.metadata.namespace ?? ""}/${p.metadata.name}`).sort();
    return {
      ok: false,
      message: `${live.length} Pods have IP ${ip} (${names.join(", ")}): cannot tell which`,
    };
  }
  const namespace = pod.metadata.namespace ?? "";
  const spec = (pod.spec ?? {}) as { serviceAccountName?: unknown };
  const attributes: Record<string, string> = {
    [ATTRIBUTES.clientNamespace]: namespace,
    [ATTRIBUTES.clientServiceAccount]:
      typeof spec.serviceAccountName === "string" ? spec.serviceAccountName : "default",
  };
  for (const [key, value] of Object.entries(pod.metadata.labels ?? {}))
    attributes[`${ATTRIBUTES.clientLabelPrefix}${key}`] = value;
  return { ok: true, pod: `${namespace}/${pod.metadata.name}`, attributes };
}

export interface EgressObserved {
  readonly importRef: { readonly namespace: string; readonly name: string };
  /** The Import's spec, undefined when the Import does not exist or its spec does not parse. */
  readonly importSpec: ImportSpec | undefined;
  readonly client: ClientView;
  /** The source the dataplane chose; absent: every source is decided. */
  readonly chosen: ImportSource | undefined;
  /** Every Peer the sources name, undefined where it does not exist. */
  readonly peers: ReadonlyMap<string, PeerView | undefined>;
  readonly policies: readonly LivePolicy[];
}

export interface SourceDecision {
  readonly source: ImportSource;
  readonly decision: AccessDecision;
}

export interface EgressDecision {
  /** The chosen source's decision, or the first allowed source's (spec order), else the first. */
  readonly decision: AccessDecision;
  readonly source?: ImportSource;
  readonly sources: readonly SourceDecision[];
}

const sameSource = (a: ImportSource, b: ImportSource): boolean =>
  a.peer === b.peer && a.exportName === b.exportName && a.exportNamespace === b.exportNamespace;

function decideSource(
  observed: EgressObserved,
  client: Attributes,
  source: ImportSource,
): AccessDecision {
  const peer = observed.peers.get(source.peer);
  if (peer === undefined) return deny(PRECONDITION.unknownPeer, `no Peer ${source.peer}`);
  const { attributes, unknown } = peerAttributes(peer);
  return decideAccess(observed.policies, {
    source: client,
    destination: {
      ...attributes,
      [ATTRIBUTES.exportName]: source.exportName,
      [ATTRIBUTES.exportNamespace]: source.exportNamespace,
    },
    namespace: observed.importRef.namespace,
    unknown,
  });
}

export function planEgress(observed: EgressObserved): EgressDecision {
  const { importRef, importSpec, client, chosen } = observed;
  const at = `${importRef.namespace}/${importRef.name}`;
  if (importSpec === undefined) {
    const decision = deny(PRECONDITION.importNotFound, `no valid Import ${at}`);
    return { decision, sources: [] };
  }
  if (!client.ok)
    return { decision: deny(PRECONDITION.unknownClient, client.message), sources: [] };
  const sources = importSpec.sources ?? [];
  if (chosen !== undefined && !sources.some((s) => sameSource(s, chosen))) {
    const which = `${chosen.peer}/${chosen.exportNamespace}/${chosen.exportName}`;
    const decision = deny(PRECONDITION.notASource, `${which} is not a source of Import ${at}`);
    return { decision, source: chosen, sources: [] };
  }
  const decided = (chosen === undefined ? sources : [chosen]).map((source) => ({
    source,
    decision: decideSource(observed, client.attributes, source),
  }));
  const pick = decided.find((d) => d.decision.action === "allow") ?? decided[0];
  if (pick === undefined) {
    const decision = deny(PRECONDITION.notASource, `Import ${at} has no sources`);
    return { decision, sources: [] };
  }
  return { decision: pick.decision, source: pick.source, sources: decided };
}
