/**
 * clusterlink-authz's one entry: a decision request in, what it names read from the API server,
 * the decision of plan-authz.ts / plan-access.ts out, naming what decided. Who asks comes from
 * the connection (`caller`: the verified client certificate), never from the body. A policy that
 * cannot be evaluated gets `PolicyValid False` and a Warning Event (plan-policy-status.ts).
 * The request and reply shapes: docs/code-notes.md (clusterlink/on-access-request.ts) and
 * docs/clusterlink.md.
 */
import * as z from "zod";
import type { Log } from "../core/context.js";
import { isDnsSubdomain } from "../core/labels.js";
import type { KubeObject } from "../core/objects.js";
import { isKubeError, raced, type EntryContext, type EventRecorder } from "../kube/index.js";
import { clusterLinkStatusSchema } from "../kinds/clusterlink.js";
import { observeExport, observeImport } from "./observed.js";
import { compilePolicy, type AccessDecision, type LivePolicy } from "./plan-access.js";
import {
  clientOf,
  ingressPeerName,
  peerViewOf,
  planEgress,
  planIngress,
  refuseUnverified,
  type Caller,
  type PeerView,
  type Refusal,
  type UnverifiedCallers,
} from "./plan-authz.js";
import { planPolicyStatus } from "./plan-policy-status.js";
import { recordClusterLinkEvents } from "./record-events.js";
import type { ClusterLinkStore } from "./store.js";
import { kubeClusterLinkStore } from "./kube-store.js";

const objectRef = z.strictObject({ name: z.string().min(1), namespace: z.string().min(1) });

const clientAttributes = z.record(z.string(), z.string()).superRefine((attributes, ctx) => {
  for (const key of Object.keys(attributes)) {
    if (key.startsWith("client.clusterlink.net/")) continue;
    ctx.addIssue({
      code: "custom",
      path: [key],
      message:
        "only client.clusterlink.net/ attributes are taken from a request: the Peer's come from its certificate and status, the Export's from the Export",
    });
  }
});

export const ingressRequestSchema = z.strictObject({
  export: objectRef,
  source: clientAttributes.default({}),
  /** Only from an unverified caller trusted to ask on a Peer's behalf. */
  peer: z.string().min(1).optional(),
});

export const egressRequestSchema = z.strictObject({
  import: objectRef,
  client: z.strictObject({ ip: z.union([z.ipv4(), z.ipv6()]) }),
  target: z
    .strictObject({
      peer: z.string().min(1),
      exportName: z.string().min(1),
      exportNamespace: z.string().min(1),
    })
    .optional(),
});

export interface JsonReply {
  readonly status: number;
  readonly body: unknown;
}

export interface AuthzOptions {
  /** Where Peers live (CL_NAMESPACE). */
  readonly clNamespace: string;
  readonly unverified: UnverifiedCallers;
  /** Who asks, as the connection proves it; undefined when nothing does. */
  readonly caller: Caller | undefined;
  readonly now: string;
  readonly events?: EventRecorder;
}

const badRequest = (error: z.ZodError): JsonReply => {
  const message = error.issues
    .map((i) => `${i.path.map(String).join(".") || "body"}: ${i.message}`)
    .join("; ");
  return { status: 400, body: { error: "bad-request", message } };
};

const refusal = (r: Refusal): JsonReply => ({
  status: r.status,
  body: { error: r.error, message: r.message },
});

interface ReadPolicy {
  readonly live: LivePolicy;
  readonly object: KubeObject;
}

async function readPolicies(store: ClusterLinkStore, namespace: string): Promise<ReadPolicy[]> {
  const [privileged, namespaced] = await Promise.all([
    store.listPrivilegedAccessPolicies(),
    store.listAccessPolicies({ namespace }),
  ]);
  const read = (object: KubeObject, isPrivileged: boolean): ReadPolicy => {
    const ns = object.metadata.namespace ?? "";
    const name = isPrivileged ? object.metadata.name : `${ns}/${object.metadata.name}`;
    const stored = { name, privileged: isPrivileged, namespace: ns, spec: object.spec };
    return { live: compilePolicy(stored), object };
  };
  return [...privileged.map((o) => read(o, true)), ...namespaced.map((o) => read(o, false))];
}

/** PolicyValid on every policy read whose validity changed, and its Event; best-effort. */
async function reportPolicies(
  store: ClusterLinkStore,
  policies: readonly ReadPolicy[],
  options: AuthzOptions,
  log: Log,
): Promise<void> {
  await Promise.all(
    policies.map(async ({ live, object }) => {
      const stored = clusterLinkStatusSchema.safeParse(object.status ?? {});
      const meta = object.metadata;
      const plan = planPolicyStatus(
        live,
        stored.success ? stored.data : undefined,
        meta.generation ?? 0,
        options.now,
      );
      if (plan.write === null) return;
      const patchStatus = live.privileged
        ? store.patchPrivilegedAccessPolicyStatus
        : store.patchAccessPolicyStatus;
      const key = { name: meta.name, namespace: live.namespace };
      try {
        await patchStatus(key, plan.write, {
          ...(meta.resourceVersion === undefined ? {} : { resourceVersion: meta.resourceVersion }),
        });
      } catch (error) {
        // A conflict: another decision wrote it, or the spec changed; the next one re-checks.
        if (!raced(error)) log.warn({ err: error, policy: live.name }, "policy status not written");
        return;
      }
      await recordClusterLinkEvents(
        options.events,
        {
          kind: live.privileged ? "PrivilegedAccessPolicy" : "AccessPolicy",
          ...key,
          uid: meta.uid ?? "",
        },
        plan.events,
      );
    }),
  );
}

const decisionBody = (decision: AccessDecision): Record<string, unknown> => ({
  allowed: decision.action === "allow",
  ...decision,
});

async function peerView(
  store: ClusterLinkStore,
  name: string,
  clNamespace: string,
): Promise<PeerView | undefined> {
  if (!isDnsSubdomain(name)) return undefined;
  const object = await store.getPeer({ namespace: clNamespace, name });
  return object === undefined ? undefined : peerViewOf(object);
}

async function decideIngress(
  request: z.infer<typeof ingressRequestSchema>,
  store: ClusterLinkStore,
  options: AuthzOptions,
  log: Log,
): Promise<JsonReply> {
  const who = ingressPeerName(options.caller, request.peer, options.unverified);
  if ("status" in who) return refusal(who);
  const exportRef = request.export;
  const [peer, exported, policies] = await Promise.all([
    peerView(store, who.peer, options.clNamespace),
    store.getExport(exportRef),
    readPolicies(store, exportRef.namespace),
  ]);
  const decision = planIngress({
    clNamespace: options.clNamespace,
    peerName: who.peer,
    peer,
    exportRef,
    export: exported === undefined ? undefined : observeExport(exported),
    client: request.source,
    policies: policies.map((p) => p.live),
  });
  await reportPolicies(store, policies, options, log);
  const subject = { peer: who.peer, export: `${exportRef.namespace}/${exportRef.name}` };
  log.debug({ ...decision, ...subject }, "ingress access decided");
  return {
    status: 200,
    body: { ...decisionBody(decision), direction: "ingress", ...subject },
  };
}

async function decideEgress(
  request: z.infer<typeof egressRequestSchema>,
  store: ClusterLinkStore,
  options: AuthzOptions,
  log: Log,
): Promise<JsonReply> {
  const refused = refuseUnverified(options.caller, options.unverified);
  if (refused !== null) return refusal(refused);
  const importRef = request.import;
  const ip = request.client.ip;
  const [imported, pods, policies] = await Promise.all([
    store.getImport(importRef),
    store.listPods({ fieldSelector: `status.podIP=${ip}` }),
    readPolicies(store, importRef.namespace),
  ]);
  const observed = imported === undefined ? undefined : observeImport(imported);
  const importSpec = observed?.spec.ok === true ? observed.spec.value : undefined;
  const names = [...new Set((importSpec?.sources ?? []).map((s) => s.peer))];
  const peers = new Map(
    await Promise.all(
      names.map(async (name) => [name, await peerView(store, name, options.clNamespace)] as const),
    ),
  );
  const client = clientOf(pods, ip);
  const egress = planEgress({
    importRef,
    importSpec,
    client,
    chosen: request.target,
    peers,
    policies: policies.map((p) => p.live),
  });
  await reportPolicies(store, policies, options, log);
  const subject = {
    import: `${importRef.namespace}/${importRef.name}`,
    client: client.ok ? client.pod : ip,
  };
  log.debug({ ...egress.decision, ...subject }, "egress access decided");
  return {
    status: 200,
    body: {
      ...decisionBody(egress.decision),
      direction: "egress",
      ...subject,
      ...(egress.source === undefined ? {} : { target: egress.source }),
      ...(request.target === undefined && egress.sources.length > 0
        ? {
            sources: egress.sources.map((s) => ({ ...s.source, ...decisionBody(s.decision) })),
          }
        : {}),
    },
  };
}

/** clusterlink-authz's context: the API, the log, the clock, and who asks with its settings. */
export type AccessRequestContext = EntryContext & Omit<AuthzOptions, "now" | "events">;

export async function decideAccessRequest(
  body: unknown,
  ctx: AccessRequestContext,
): Promise<JsonReply> {
  const { kube, log, now, ...settings } = ctx;
  const options: AuthzOptions = { ...settings, now: now() };
  const egress = typeof body === "object" && body !== null && "import" in body;
  const store = kubeClusterLinkStore(kube);
  try {
    if (egress) {
      const parsed = egressRequestSchema.safeParse(body);
      return parsed.success
        ? await decideEgress(parsed.data, store, options, log)
        : badRequest(parsed.error);
    }
    const parsed = ingressRequestSchema.safeParse(body);
    return parsed.success
      ? await decideIngress(parsed.data, store, options, log)
      : badRequest(parsed.error);
  } catch (error) {
    if (isKubeError(error))
      return { status: 503, body: { error: "unavailable", message: error.message } };
    throw error;
  }
}
