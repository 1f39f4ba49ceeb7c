/**
 * One sync of the node agent (issue 31; docs/netpol.md "The node agent"): read what the node
 * enforces (agent-store.ts), plan the node's nftables table (plan-node-enforcement.ts,
 * plan-nft-ruleset.ts) and load it in one transaction (nft.ts). Nothing is kept between syncs
 * but the script last loaded, to skip loading an identical one again (a forced sync loads anyway).
 *
 * Read order: Pods, then their tables, then (only where a Pod has none) policies, then the peer
 * sets the tables reference. A change after a read arrives as a watch event and syncs again.
 */
import pLimit from "p-limit";
import type { PeerSetSpec } from "../rules/netpol-kinds.js";
import { netpolEndpointSchema, netpolPeerSetSchema } from "../rules/netpol-kinds.js";
import type { NodeAgentStore } from "./agent-store.js";
import type { NftApply } from "./nft.js";
import { isEligiblePod, parseNetpolPod, parseNetworkPolicy, type NetpolPod } from "./observed.js";
import type { NodeScope } from "./plan-agent-hint.js";
import {
  namespacesAwaitingTables,
  planNodeEnforcement,
  type ObservedEndpoint,
  type ObservedPolicy,
  type PodState,
} from "./plan-node-enforcement.js";
import { planNodeScript, type RulesetOptions, type RulesetStats } from "./plan-nft-ruleset.js";

export interface NodeSyncOptions {
  readonly node: string;
  readonly ruleset: RulesetOptions;
  readonly apply: NftApply;
  /** The script this process loaded last; an identical plan is not loaded again unless forced. */
  readonly lastApplied?: string;
  /** Load even when the plan equals lastApplied (the periodic resync: the kernel's copy may differ). */
  readonly force?: boolean;
  /** Reads in flight. Default 16. */
  readonly concurrency?: number;
}

export interface NodeSyncResult {
  /** Whether the script was loaded (else it equalled the last one loaded). */
  readonly applied: boolean;
  readonly script: string;
  readonly stats: RulesetStats;
  /** The node's eligible Pods by what they get. */
  readonly pods: Readonly<Record<PodState, number>>;
  /** What could not be read, and Pods that fail closed for it (each also in the ruleset). */
  readonly problems: readonly string[];
  readonly scope: NodeScope;
  readonly timings: { readonly readMs: number; readonly planMs: number; readonly applyMs: number };
}

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

function observedEndpoint(raw: unknown): ObservedEndpoint {
  const parsed = netpolEndpointSchema.safeParse(raw);
  if (!parsed.success) return { readable: false, message: parsed.error.issues[0]?.message ?? "" };
  const owners = (parsed.data.metadata["ownerReferences"] ?? []) as {
    kind?: string;
    uid?: string;
  }[];
  const owner = owners.find((o) => o.kind === "Pod");
  return { readable: true, ownerUid: owner?.uid ?? "", spec: parsed.data.spec };
}

function observedPolicy(raw: unknown): ObservedPolicy {
  const parsed = parseNetworkPolicy(raw);
  if (parsed.ok) return { readable: true, policy: parsed.value };
  const name = (raw as { metadata?: { name?: string } } | null)?.metadata?.name ?? "(unnamed)";
  return { readable: false, name, message: parsed.message };
}

interface Observed {
  readonly pods: NetpolPod[];
  readonly endpoints: Map<string, ObservedEndpoint>;
  readonly policies: Map<string, ObservedPolicy[]>;
  readonly peerSets: Map<string, PeerSetSpec>;
  /** Every peer set a table references, stored or not (one stored later must sync). */
  readonly referenced: ReadonlySet<string>;
  readonly problems: string[];
}

async function observe(store: NodeAgentStore, options: NodeSyncOptions): Promise<Observed> {
  const limit = pLimit(options.concurrency ?? 16);
  const problems: string[] = [];
  const pods = (await store.listNodePods(options.node)).flatMap((raw) => {
    const parsed = parseNetpolPod(raw);
    if (parsed.ok) return [parsed.value];
    // Its address is unknown, so the guard drops whatever it sends or receives.
    problems.push(`a Pod of the node cannot be read: ${parsed.message}`);
    return [];
  });
  const endpoints = new Map<string, ObservedEndpoint>();
  await Promise.all(
    pods.filter(isEligiblePod).map((pod) =>
      limit(async () => {
        const raw = await store.getEndpoint(pod.namespace, pod.name);
        if (raw !== undefined) endpoints.set(key(pod.namespace, pod.name), observedEndpoint(raw));
      }),
    ),
  );
  const policies = new Map<string, ObservedPolicy[]>();
  await Promise.all(
    namespacesAwaitingTables(pods, endpoints).map((namespace) =>
      limit(async () => {
        policies.set(namespace, (await store.listPolicies(namespace)).map(observedPolicy));
      }),
    ),
  );
  const referenced = new Set<string>();
  for (const [podKey, endpoint] of endpoints) {
    if (!endpoint.readable) continue;
    const namespace = podKey.slice(0, podKey.indexOf("/"));
    for (const direction of [endpoint.spec.ingress, endpoint.spec.egress])
      for (const ref of direction.peerGroups) referenced.add(key(namespace, ref.peerSet));
  }
  const peerSets = new Map<string, PeerSetSpec>();
  await Promise.all(
    [...referenced].sort().map((setKey) =>
      limit(async () => {
        const [namespace = "", name = ""] = setKey.split("/");
        const raw = await store.getPeerSet(namespace, name);
        if (raw === undefined) return; // not stored yet: its groups match nothing
        const parsed = netpolPeerSetSchema.safeParse(raw);
        if (parsed.success) peerSets.set(setKey, parsed.data.spec);
        else problems.push(`peer set ${setKey} cannot be read: its peers are denied`);
      }),
    ),
  );
  return { pods, endpoints, policies, peerSets, referenced, problems };
}

export async function syncNode(
  store: NodeAgentStore,
  options: NodeSyncOptions,
): Promise<NodeSyncResult> {
  const started = performance.now();
  const observed = await observe(store, options);
  const read = performance.now();
  const enforcement = planNodeEnforcement(observed);
  const { script, stats } = planNodeScript(enforcement, observed.peerSets, options.ruleset);
  const planned = performance.now();
  const applied = options.force === true || script !== options.lastApplied;
  if (applied) await options.apply(script);
  const done = performance.now();
  const pods: Record<PodState, number> = {
    tables: 0,
    unselected: 0,
    "awaiting-tables": 0,
    unreadable: 0,
    "address-clash": 0,
  };
  const problems = [...observed.problems];
  for (const pod of enforcement.pods) {
    pods[pod.state] += 1;
    if (pod.state === "unreadable" || pod.state === "address-clash")
      problems.push(`${pod.namespace}/${pod.name}: ${pod.reason}`);
  }
  return {
    applied,
    script,
    stats,
    pods,
    problems,
    scope: {
      pods: new Set(observed.pods.map((p) => key(p.namespace, p.name))),
      peerSets: observed.referenced,
      namespaces: new Set(observed.pods.map((p) => p.namespace)),
    },
    timings: { readMs: read - started, planMs: planned - read, applyMs: done - planned },
  };
}
