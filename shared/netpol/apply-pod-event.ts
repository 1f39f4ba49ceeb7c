/**
 * The effectful shell of a Pod event's fast path (plan-pod-event.ts): reads only what one Pod can
 * change (the Pod, its Namespace, the policies, the peer sets the member index finds, its
 * endpoint), and before writing re-reads the Pod, Namespace and policies: a change re-runs the
 * event. Writes carry the resourceVersion read. Returns why, when the plan hands the event to the
 * full recompute. Why that ordering is safe: docs/code-notes.md (netpol/apply-pod-event.ts).
 */
import { KubeError } from "../kube/errors.js";
import type { ReadFreshness } from "../kube/freshness.js";
import type { Labels } from "../core/labels.js";
import type { NetpolEventResult, NetpolStore } from "./store.js";
import {
  parseNetpolNamespace,
  parseNetpolPod,
  parseNetworkPolicy,
  type Parsed,
} from "./observed.js";
import { compilePolicy, type CompiledPolicy } from "./plan-tables.js";
import { planPodEvent, podEventScope, type PodEventWorld } from "./plan-pod-event.js";
import { OLDER_PEER_SETS } from "./table-objects.js";
import type { NetpolTrigger, TableWrite } from "./plan-scope.js";

type Limit = <T>(task: () => Promise<T>) => Promise<T>;

interface Reading {
  readonly limit: Limit;
  /** Of every list (shared/kube/freshness.ts); the GETs by name are consistent. */
  readonly freshness: ReadFreshness;
  /** Bytes of JSON one peer set may take (peer-set-bound.ts). */
  readonly maxPeerSetBytes: number;
}

const resourceVersionOf = (object: unknown): string | undefined =>
  (object as { metadata?: { resourceVersion?: string } } | null)?.metadata?.resourceVersion;

interface ReadWorld {
  readonly world: PodEventWorld;
  readonly rawPod: unknown;
  readonly rawNamespace: unknown;
  /** resourceVersions of the NetworkPolicies of the Pod's namespace, by name. */
  readonly localPolicies: string;
  readonly unreadable: readonly string[];
}

/**
 * Compiled policies by uid and resourceVersion: every Pod event reads every policy, and parsing
 * and compiling 500 of them costs more than the rest of the event. A memo of a pure function of
 * an immutable version, not a store: a miss (a new process, an evicted entry) only recompiles.
 */
const memo = new Map<string, Parsed<CompiledPolicy>>();
const MEMO_ENTRIES = 8_192;

function compiledPolicy(raw: unknown): Parsed<CompiledPolicy> {
  const metadata = (raw as { metadata?: { uid?: string; resourceVersion?: string } } | null)
    ?.metadata;
  const key =
    metadata?.uid && metadata.resourceVersion ? `${metadata.uid}@${metadata.resourceVersion}` : "";
  const known = key === "" ? undefined : memo.get(key);
  if (known !== undefined) return known;
  const parsed = parseNetworkPolicy(raw);
  const compiled: Parsed<CompiledPolicy> = parsed.ok
    ? { ok: true, value: compilePolicy(parsed.value) }
    : parsed;
  if (key !== "") {
    if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value ?? "");
    memo.set(key, compiled);
  }
  return compiled;
}

const versionsOf = (policies: readonly unknown[], namespace: string): string =>
  policies
    .map((p) => p as { metadata?: { namespace?: string; name?: string; resourceVersion?: string } })
    .filter((p) => p.metadata?.namespace === namespace)
    .map((p) => `${p.metadata?.name ?? ""}@${p.metadata?.resourceVersion ?? ""}`)
    .sort()
    .join(",");

/** Step 1: the Pod, its Namespace and every policy; null when the Pod does not parse. */
async function readWorld(
  store: NetpolStore,
  namespace: string,
  name: string,
  freshness: ReadFreshness,
): Promise<ReadWorld | null> {
  const [rawPod, rawNamespace, rawPolicies] = await Promise.all([
    store.getPod(namespace, name),
    store.getNamespace(namespace),
    // A policy change has its own event, which reads it consistently; a write of ours is checked
    // against the namespace's policies again (verifyUnchanged) and a peer set against its
    // generation. The Pod, whose change this event is for, and its Namespace are GETs (fresh).
    store.listPolicies(undefined, freshness),
  ]);
  const pod = rawPod === null ? null : parseNetpolPod(rawPod);
  if (pod !== null && !pod.ok) return null;
  const parsedNamespace = rawNamespace === null ? null : parseNetpolNamespace(rawNamespace);
  const namespaceLabels: Labels | undefined =
    parsedNamespace?.ok === true ? parsedNamespace.value.labels : undefined;
  const unreadable: string[] = [];
  const policies: CompiledPolicy[] = [];
  for (const raw of rawPolicies) {
    const compiled = compiledPolicy(raw);
    if (compiled.ok) policies.push(compiled.value);
    else unreadable.push(`NetworkPolicy: ${compiled.message}`);
  }
  const world = { namespace, name, pod: pod?.value ?? null, namespaceLabels, policies };
  const localPolicies = versionsOf(rawPolicies, namespace);
  return { world, rawPod, rawNamespace, localPolicies, unreadable };
}

/** Step 3: the Pod, its Namespace and its namespace's policies are as read, or the event re-runs. */
async function verifyUnchanged(
  store: NetpolStore,
  read: ReadWorld,
  freshness: ReadFreshness,
): Promise<void> {
  const { namespace, name } = read.world;
  const [podAgain, namespaceAgain, policiesAgain] = await Promise.all([
    store.getPod(namespace, name),
    store.getNamespace(namespace),
    // From the cache on a first attempt: a policy change whose own event already rewrote a table
    // we read was delivered through this API server's watch cache of policies, so that cache has
    // it by now (ADR 0004, addendum).
    store.listPolicies(namespace, freshness),
  ]);
  if (
    resourceVersionOf(podAgain) !== resourceVersionOf(read.rawPod) ||
    resourceVersionOf(namespaceAgain) !== resourceVersionOf(read.rawNamespace) ||
    versionsOf(policiesAgain, namespace) !== read.localPolicies
  ) {
    throw new KubeError(
      "conflict",
      `Pod ${namespace}/${name} or what selects it changed meanwhile`,
    );
  }
}

export async function applyPodEventFast(
  trigger: Extract<NetpolTrigger, { kind: "pod" }>,
  store: NetpolStore,
  { limit, freshness, maxPeerSetBytes }: Reading,
  write: (w: TableWrite) => Promise<void>,
): Promise<NetpolEventResult | { readonly fullBecause: string }> {
  const { namespace, name } = trigger;
  const read = await readWorld(store, namespace, name, freshness);
  if (read === null) return { fullBecause: "the Pod does not parse" }; // reported there
  const scope = podEventScope(read.world);
  const [ownTable, found, sources, older] = await Promise.all([
    limit(() => store.getTable("endpoint", namespace, name)),
    Promise.all(
      scope.selectors.map((s) => limit(() => store.listTables("peerSet", null, s, freshness))),
    ),
    Promise.all(
      scope.splitSources.map((key) => {
        const [ns = "", set = ""] = key.split("/");
        return limit(() => store.getTable("peerSet", ns, set));
      }),
    ),
    // The index cannot find a peer set written before it: the full recompute rewrites those.
    limit(() => store.listTables("peerSet", null, OLDER_PEER_SETS, freshness)),
  ]);
  if (older.length > 0) return { fullBecause: "peer sets written by an older version" };
  const splitSources = new Map(scope.splitSources.map((key, i) => [key, sources[i] ?? null]));
  const tables = { ownTable, found: found.flat(), splitSources };
  const plan = planPodEvent(read.world, scope, tables, maxPeerSetBytes);
  if (plan.kind === "stale") throw new KubeError("conflict", plan.reason);
  if (plan.kind === "full") return { fullBecause: plan.reason };
  if (plan.peerSets.length + plan.endpoint.length > 0) {
    await verifyUnchanged(store, read, freshness);
  }
  const writes = { create: 0, replace: 0, delete: 0 };
  for (const phase of [plan.peerSets, plan.endpoint]) {
    await Promise.all(phase.map((w) => limit(() => write(w))));
    for (const w of phase) writes[w.action] += 1;
  }
  return {
    trigger,
    endpoints: plan.considered.endpoints,
    peerSets: plan.considered.peerSets,
    writes,
    problems: read.unreadable,
    path: "pod",
  };
}
