// Issue 28 §3: what a CNF pod restart costs in Kubernetes Events, and what an operator reads. The
// restart is one fact about the CNF: `kubectl describe deployment` tells it (how many rules went
// waiting, how many were written back to which pod), the rules tell only what is theirs alone,
// and each Event costs about one API request, however many Events were written before.
import { jest } from "@jest/globals";
import { randomBytes } from "node:crypto";
import { CoreV1Api } from "@kubernetes/client-node";
import { sampleRule, sampleRules, type Cnf, type CnfPod } from "../../dev/world/index.js";
import { createOnDeploymentReady } from "../../functions/on-deployment-ready/index.js";
import type { CallCounters } from "../../shared/core/context.js";
import type { Outcome } from "../../shared/core/outcome.js";
import type { IntakeEvent } from "../../shared/events/types.js";
import { adminKubeConfig } from "./support/cluster.js";
import { CORE_EVENTS, EventRequests } from "./support/events.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(90_000);

const PURPOSE = "cnf1";

interface DescribedEvent {
  /** The Event object's own name. */
  readonly event: string;
  readonly type: string;
  readonly reason: string;
  readonly message: string;
  readonly kind: string;
  readonly name: string;
  readonly count: number;
}

/** Every Event of the namespace as `kubectl get events` shows it. */
async function namespaceEvents(world: SyncWorld): Promise<DescribedEvent[]> {
  const events = await world.kube.list(CORE_EVENTS, { namespace: world.namespace });
  return events.map((e) => {
    const raw = e as unknown as {
      metadata: { name: string };
      type: string;
      reason: string;
      message: string;
      involvedObject: { kind: string; name: string };
      series?: { count?: number };
      count?: number;
    };
    return {
      event: raw.metadata.name,
      type: raw.type,
      reason: raw.reason,
      message: raw.message,
      kind: raw.involvedObject.kind,
      name: raw.involvedObject.name,
      count: raw.series?.count ?? raw.count ?? 1,
    };
  });
}

/** The Events written or counted again since `before` (an Event whose count rose is listed once). */
function since(
  before: readonly DescribedEvent[],
  after: readonly DescribedEvent[],
): DescribedEvent[] {
  const counted = new Map(before.map((e) => [e.event, e.count]));
  return after.filter((e) => (counted.get(e.event) ?? 0) < e.count);
}

describe("a CNF pod restart, as Events tell it", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  const requests = new EventRequests();
  /** Events recorded and dropped by on-deployment-ready, over every delivery since the reset. */
  let calls: CallCounters;

  /** A Pod event to on-deployment-ready, whose Event requests are counted. */
  async function podEvent(pod: CnfPod): Promise<Outcome> {
    const fn = createOnDeploymentReady({ kube: () => requests.wrap(world.kube), env: world.env });
    const event: IntakeEvent = {
      type: "object",
      id: randomBytes(8).toString("hex"),
      action: "update",
      ref: { apiVersion: "v1", kind: "Pod", namespace: world.namespace, name: pod.name },
    };
    const ctx = world.context();
    const outcome = await fn.handle(event, { ...ctx, calls });
    return outcome;
  }

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    requests.count = 0;
    calls = { api: 0, cnf: 0 };
    // Every sample rule applied by its own event, as reconcile-rule applies it: one Applied
    // Event per rule, written by another function (another process, in a cluster).
    for (const sample of sampleRules()) {
      await world.createRule(sample.kind, sample.name, PURPOSE, structuredClone(sample.spec));
    }
    const outcomes = await world.resyncRules({ order: "apply" });
    expect([...outcomes.values()].every((o) => o.kind === "done")).toBe(true);
  });
  afterEach(() => world.close());

  it("is two Events on the CNF Deployment (rules waiting, rules written back to the pod), none per rule, at about one request each", async () => {
    const rules = sampleRules().length;
    const restarted = cnf.pods[1] as CnfPod;
    const before = await namespaceEvents(world);

    await world.crashPod(restarted);
    expect(await podEvent(restarted)).toMatchObject({ kind: "done" });
    await world.setPodReady(restarted, true);
    expect(await podEvent(restarted)).toEqual({ kind: "done", result: `${rules} re-applied` });

    const written = since(before, await namespaceEvents(world));
    expect(written.filter((e) => e.kind !== "Deployment")).toEqual([]);
    expect(written.map((e) => `${e.type} ${e.reason} ${e.kind}/${e.name}`).sort()).toEqual([
      `Normal RulesApplied Deployment/${cnf.name}`,
      `Warning RulesNotReady Deployment/${cnf.name}`,
    ]);
    const waiting = written.find((e) => e.reason === "RulesNotReady");
    expect(waiting?.message).toContain(`${rules} rules`);
    expect(waiting?.message).toContain(`CNF ${cnf.name} has 1/2 pods ready`);
    expect(waiting?.message).toContain("stay applied on the ready pods");
    const back = written.find((e) => e.reason === "RulesApplied");
    expect(back?.message).toContain(`${rules} rules`);
    expect(back?.message).toContain(`written to pod ${restarted.name}: ${rules}`);

    expect(calls.eventsRecorded).toBe(2);
    expect(requests.count / (calls.eventsRecorded ?? 0)).toBeLessThanOrEqual(1.2);
    // What the function counts itself (sdewan_kube_event_requests_total) is what it made.
    expect(calls.eventRequests).toBe(requests.count);
  });

  it("restarting again and again is the same two Events, counted, never read back", async () => {
    const restarted = cnf.pods[1] as CnfPod;
    for (let i = 0; i < 3; i += 1) {
      await world.crashPod(restarted);
      await podEvent(restarted);
      await world.setPodReady(restarted, true);
      await podEvent(restarted);
    }

    const onDeployment = (await namespaceEvents(world)).filter((e) => e.kind === "Deployment");
    expect(onDeployment.map((e) => `${e.reason} x${e.count}`).sort()).toEqual([
      "RulesApplied x3",
      "RulesNotReady x3",
    ]);
    expect(calls.eventsRecorded).toBe(6);
    expect(requests.count).toBe(6);
  });

  it("a few rules that change for reasons of their own keep their own Events", async () => {
    // Two rules' specs change while the pod is down: the restart re-applies every rule, and
    // these two also apply a new generation, which is news about them alone.
    const policy = sampleRule("Mwan3Policy");
    const restarted = cnf.pods[1] as CnfPod;
    await world.crashPod(restarted);
    await podEvent(restarted);
    await world.patchRuleSpec("Mwan3Policy", policy.name, {
      ...structuredClone(policy.spec),
      members: [{ network: "ovn-net1", metric: 3, weight: 3 }],
    });
    await world.setPodReady(restarted, true);
    const before = await namespaceEvents(world);
    expect(await podEvent(restarted)).toMatchObject({ kind: "done" });

    const written = since(before, await namespaceEvents(world));
    expect(written.filter((e) => e.kind !== "Deployment")).toEqual([
      expect.objectContaining({ kind: "Mwan3Policy", name: policy.name, reason: "Applied" }),
    ]);
    expect(written.filter((e) => e.kind === "Deployment").map((e) => e.reason)).toEqual([
      "RulesApplied",
    ]);
  });
});

describe("the CNF Deployment's Event, when the CNF echoes a key", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  const core = adminKubeConfig().makeApiClient(CoreV1Api);

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
  });
  afterEach(() => world.close());

  it("says [redacted] where the key was, for every rule it speaks for", async () => {
    const psk = `PSK-SUPERSECRET-${randomBytes(12).toString("hex")}`;
    await core.createNamespacedSecret({
      namespace: world.namespace,
      body: { metadata: { name: "ipsec-keys" }, stringData: { psk } },
    });
    await world.createSampleRule(PURPOSE, "IpsecProposal");
    const site = sampleRule("IpsecSite");
    const [connection] = site.spec["connections"] as Record<string, unknown>[];
    for (let i = 0; i < 5; i += 1) {
      await world.createRule("IpsecSite", `site${i}`, PURPOSE, {
        ...structuredClone(site.spec),
        pre_shared_key: undefined,
        pre_shared_key_secret_ref: { name: "ipsec-keys", key: "psk" },
        connections: [{ ...connection, name: `conn${i}` }],
      });
    }
    expect(await world.syncCnf(cnf)).toEqual({ kind: "done", result: "6 created" });
    // The pod comes back from a restart with a CNF that refuses every site it had, echoing the key.
    const restarted = cnf.pods[1] as CnfPod;
    await world.crashPod(restarted);
    expect(await world.syncCnf(cnf)).toMatchObject({ kind: "done" });
    restarted.sim.failNext({
      kind: "status",
      status: 400,
      method: "PUT",
      message: `Field[pre_shared_key] checked failed: ${psk} is too weak`,
      collection: "ipsec/remotes",
      count: 100,
    });
    await world.setPodReady(restarted, true);
    expect(await world.syncCnf(cnf)).toEqual({ kind: "done", result: "1 re-applied, 5 stalled" });

    const events = await namespaceEvents(world);
    const rejected = events.find((e) => e.kind === "Deployment" && e.reason === "RulesRejected");
    expect(rejected?.message).toContain("5 rules");
    expect(rejected?.message).toContain("[redacted] is too weak");
    expect(JSON.stringify(events)).not.toContain(psk);
    expect(JSON.stringify(events)).not.toContain(psk.slice(0, 12));
  });
});
