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
import type { PeerSetSpec } from "../kinds/netpol.js";
import { netpolEndpointSchema, netpolPeerSetSchema } from "../kinds/netpol.js";
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
import {
  planNodeScript,
  renderNftUpdate,
  type RulesetOptions,
  type RulesetPlan,
  type RulesetStats,
} from "./plan-nft-ruleset.js";

export interface NodeSyncOptions {
  readonly node: string;
  readonly ruleset: RulesetOptions;
  readonly apply: NftApply;
  /**
   * What this process loaded last: an identical plan is not loaded again, a different one is
   * loaded as the difference (renderNftUpdate), unless forced.
   */
  readonly previous?: LoadedRuleset;
  /** Replace the whole table even when nothing changed (the periodic resync: the kernel's copy may differ). */
  readonly force?: boolean;
  /** Reads in flight. Default 16. */
  readonly concurrency?: number;
}

/** A ruleset loaded into the packet filter: its plan and its whole-table script. */
export interface LoadedRuleset {
  readonly plan: RulesetPlan;
  readonly script: string;
}

export interface NodeSyncResult extends LoadedRuleset {
  /** Whether anything was loaded (else the plan equalled the last one loaded). */
  readonly applied: boolean;
  /**
   * How: the whole table, its difference from the last one loaded, or the whole table after the
   * difference was refused (the kernel did not hold what this process last loaded).
   */
  readonly loaded: "none" | "table" | "update" | "table after a refused update";
  /** Bytes handed to nft. */
  readonly loadedBytes: number;
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

/** Loads the plan: nothing, its difference from the previous one, or the whole table. */
async function load(
  options: NodeSyncOptions,
  plan: RulesetPlan,
  script: string,
): Promise<Pick<NodeSyncResult, "loaded" | "loadedBytes">> {
  const { previous, force } = options;
  if (force === true || previous === undefined) {
    await options.apply(script);
    return { loaded: "table", loadedBytes: script.length };
  }
  if (script === previous.script) return { loaded: "none", loadedBytes: 0 };
  const update = renderNftUpdate(previous.plan, plan, options.ruleset);
  try {
    await options.apply(update);
    return { loaded: "update", loadedBytes: update.length };
  } catch {
    // The kernel's table is not what this process loaded last (flushed, edited): replace it.
    await options.apply(script);
    return { loaded: "table after a refused update", loadedBytes: update.length + script.length };
  }
}

export async function syncNode(
  store: NodeAgentStore,
  options: NodeSyncOptions,
): Promise<NodeSyncResult> {
  const started = performance.now();
  const observed = await observe(store, options);
  const read = performance.now();
  const enforcement = planNodeEnforcement(observed);
  const { plan, script, stats } = planNodeScript(enforcement, observed.peerSets, options.ruleset);
  const planned = performance.now();
  const { loaded, loadedBytes } = await load(options, plan, script);
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
    applied: loaded !== "none",
    loaded,
    loadedBytes,
    plan,
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
