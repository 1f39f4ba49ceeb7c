/**
 * The floor of each peer row: the fewest requests the row's work needs, issued by a plain client
 * with no logic (no planning, no retries, no cache; it knows the answer in advance) against the
 * same kind of world (the bench's control plane, a CNF of two simulators), timed the same way:
 * from the user's first request until the last request of the work is answered. The user's own
 * requests (creates, the patch, deletes, the kubelet's status writes) are made and timed as in the
 * other rows but not counted as the controller's. What each floor counts, and why that is the
 * minimum, is in docs/benchmarks.md ("Peer rows and floors").
 */
import pLimit from "p-limit";
import { CNF_NETWORKS, CnfFleet, type CnfPod } from "../../../dev/world/index.js";
import type { CnfClient } from "../../../shared/cnf/index.js";
import {
  PURPOSE_LABEL,
  parseNfnNetworkAnnotation,
  requireKind,
} from "../../../shared/kinds/index.js";
import type { BenchContext } from "../context.js";
import {
  CHANGED_RULE,
  PEER_KINDS,
  expectedHoldings,
  ruleManifest,
  rulePath,
  type PeerRule,
} from "./rules.js";
import { SPEC_CHANGE_PORTS, medianOutcome, type Outcome, type ScenarioId } from "./scenarios.js";
import { cnfWork, restartCnfPod, writeDeploymentStatus, type PeerWorld } from "./world.js";

const CONCURRENCY = 16;
const FINALIZER = "rule.finalizers.sdewan.akraino.org";

const NETWORKS = parseNfnNetworkAnnotation(CNF_NETWORKS);

/** What the CNF is sent for `rule`: the registry's conversion, the same body ours sends. */
function cnfBody(rule: PeerRule): Record<string, unknown> & { name: string } {
  const body = requireKind(rule.kind).toCnf(
    { metadata: { name: rule.name }, spec: rule.spec },
    { networks: NETWORKS },
  );
  return { ...body, name: rule.name };
}

const ref = (rule: PeerRule) => ({
  module: "mwan3",
  collection: rule.collection.split("/")[1] ?? "",
  update: "put" as const,
});

interface FloorWorld {
  readonly world: PeerWorld;
  readonly clients: CnfClient[];
  /** Requests this plain client made to the API server for the controller's part. */
  api: number;
}

async function timed(
  floor: FloorWorld,
  work: () => Promise<void>,
  check: () => string | undefined,
): Promise<Outcome> {
  for (const pod of floor.world.cnf.pods) pod.sim.resetCounters();
  floor.api = 0;
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  const problem = check();
  if (problem !== undefined) throw new Error(`the floor's end state is wrong: ${problem}`);
  const work_ = cnfWork(floor.world.cnf);
  return {
    converged: true,
    ms,
    budgetMs: 0,
    apiRequests: floor.api,
    cnfRequests: work_.requests,
    restarts: work_.restarts,
    retries: 0,
  };
}

function holds(pods: readonly CnfPod[], expected: Record<string, string[]>): string | undefined {
  for (const [i, pod] of pods.entries()) {
    const state = pod.sim.state().collections;
    for (const [collection, want] of Object.entries(expected)) {
      const held = (state[collection] ?? []).map((o) => String(o["name"])).sort();
      if (held.join(",") !== want.join(",")) return `pod ${i} ${collection}: ${held.length}`;
    }
  }
  return undefined;
}

/** Policies before rules when creating, rules before policies when deleting (the CNF's order). */
function inOrder(rules: readonly PeerRule[], kind: PeerRule["kind"]): PeerRule[] {
  return rules.filter((r) => r.kind === kind);
}

export async function measureFloors(
  ctx: BenchContext,
  rules: readonly PeerRule[],
  purpose: string,
): Promise<Record<ScenarioId, Outcome>> {
  const namespace = await ctx.cluster.namespace("peer-floor");
  const kube = ctx.cluster.adminClient();
  const fleet = new CnfFleet(kube);
  try {
    const cnf = await fleet.createCnf(purpose, { namespace, pods: 2 });
    await writeDeploymentStatus(kube, cnf, cnf.pods.length);
    const world: PeerWorld = {
      label: "floor",
      namespace,
      purpose,
      cnf,
      fleet,
      raw: ctx.cluster.raw,
      kube,
      isApplied: () => true,
      // Not asked: the floor counts its own requests (FloorWorld.api).
      apiRequests: () => Promise.resolve(0),
      retries: () => Promise.resolve(0),
      close: () => Promise.resolve(),
    };
    const floor: FloorWorld = { world, clients: cnf.pods.map((p) => fleet.cnfClient(p)), api: 0 };
    const raw = ctx.cluster.raw;
    const api = async (method: string, path: string, body?: unknown, type?: string) => {
      floor.api += 1;
      return raw.must(method, path, body, type);
    };
    const merge = "application/merge-patch+json";
    const expected = expectedHoldings(rules);
    const limit = pLimit(CONCURRENCY);
    const each = (items: readonly PeerRule[], step: (rule: PeerRule) => Promise<void>) =>
      Promise.all(items.map((rule) => limit(() => step(rule))));
    const restartAll = () => Promise.all(floor.clients.map((c) => c.restartService("mwan3")));

    // Create: per rule the user's POST, then one read, the finalizer, the object on each pod and
    // the status; per pod one list of each collection first and one mwan3 restart at the end.
    const create = await timed(
      floor,
      async () => {
        await Promise.all(
          floor.clients.flatMap((c) =>
            PEER_KINDS.map((k) =>
              c.list({ module: "mwan3", collection: k.collection.split("/")[1] ?? "" }),
            ),
          ),
        );
        for (const kind of ["Mwan3Policy", "Mwan3Rule"] as const) {
          await each(inOrder(rules, kind), async (rule) => {
            const path = rulePath(namespace, rule.plural, rule.name);
            await raw.must("POST", rulePath(namespace, rule.plural), ruleManifest(rule, purpose));
            await api("GET", path);
            await api("PATCH", path, { metadata: { finalizers: [FINALIZER] } }, merge);
            await Promise.all(floor.clients.map((c) => c.create(ref(rule), cnfBody(rule))));
            await api("PATCH", `${path}/status`, { status: { inSync: true } }, merge);
          });
        }
        await restartAll();
      },
      () => holds(cnf.pods, expected),
    );

    // Spec change: the user's patch, one read, per pod one GET, PUT and restart, one status write.
    const changed = rules.find((r) => r.name === CHANGED_RULE);
    if (changed === undefined) throw new Error(`the rule set has no ${CHANGED_RULE}`);
    const specChanges: Outcome[] = [];
    for (const port of SPEC_CHANGE_PORTS) {
      specChanges.push(
        await timed(
          floor,
          async () => {
            const path = rulePath(namespace, changed.plural, changed.name);
            await raw.mergePatch(path, { spec: { dest_port: port } });
            await api("GET", path);
            const body = { ...cnfBody(changed), dest_port: port };
            await Promise.all(
              floor.clients.map(async (c) => {
                await c.get(ref(changed), changed.name);
                await c.update(ref(changed), body);
                await c.restartService("mwan3");
              }),
            );
            await api("PATCH", `${path}/status`, { status: { inSync: true } }, merge);
          },
          () =>
            cnf.pods.every((pod) =>
              (pod.sim.state().collections[changed.collection] ?? []).some(
                (o) => o["name"] === changed.name && String(o["dest_port"]) === port,
              ),
            )
              ? undefined
              : "the change is not on every pod",
        ),
      );
    }
    const specChange = medianOutcome(specChanges);
    const port = SPEC_CHANGE_PORTS.at(-1) ?? "";

    // Pod restart: the crash and recovery as in the other rows; then one read of the pod, one
    // list per kind, and on the restarted pod one list per collection, every object, one restart.
    const pod = cnf.pods[0];
    const client = floor.clients[0];
    if (pod === undefined || client === undefined) throw new Error("the floor CNF has no pod");
    const current = (rule: PeerRule): PeerRule =>
      rule.name === changed.name ? { ...rule, spec: { ...rule.spec, dest_port: port } } : rule;
    const podRestart = await timed(
      floor,
      async () => {
        await restartCnfPod(world, pod);
        await api("GET", `/api/v1/namespaces/${namespace}/pods/${pod.name}`);
        await Promise.all(
          PEER_KINDS.map((k) =>
            api(
              "GET",
              `${rulePath(namespace, k.plural)}?labelSelector=${PURPOSE_LABEL}%3D${purpose}`,
            ),
          ),
        );
        await Promise.all(
          PEER_KINDS.map((k) =>
            client.list({ module: "mwan3", collection: k.collection.split("/")[1] ?? "" }),
          ),
        );
        for (const kind of ["Mwan3Policy", "Mwan3Rule"] as const) {
          await each(inOrder(rules, kind), async (rule) => {
            await client.create(ref(rule), cnfBody(current(rule)));
          });
        }
        await client.restartService("mwan3");
      },
      () => holds(cnf.pods, expected),
    );

    // Delete: per rule the user's DELETE, then one read, the object off each pod and the
    // finalizer removed; per pod one mwan3 restart at the end.
    const empty = Object.fromEntries(Object.keys(expected).map((c) => [c, []]));
    const del = await timed(
      floor,
      async () => {
        for (const kind of ["Mwan3Rule", "Mwan3Policy"] as const) {
          await each(inOrder(rules, kind), async (rule) => {
            const path = rulePath(namespace, rule.plural, rule.name);
            await raw.must("DELETE", path);
            await api("GET", path);
            await Promise.all(floor.clients.map((c) => c.delete(ref(rule), rule.name)));
            await api("PATCH", path, { metadata: { finalizers: null } }, merge);
          });
        }
        await restartAll();
      },
      () => holds(cnf.pods, empty),
    );
    return { create, "spec-change": specChange, "pod-restart": podRestart, delete: del };
  } finally {
    await fleet.close();
  }
}
