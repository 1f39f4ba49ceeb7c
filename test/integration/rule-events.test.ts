// Kubernetes Events on rules, read back the way `kubectl describe` reads them (core/v1 Events
// with an involvedObject field selector): one per transition, repeats counted in a series, and
// writing them never decides or delays the function's outcome.
import { jest } from "@jest/globals";
import pLimit from "p-limit";
import { sampleRule, type Cnf, type CnfPod } from "../../dev/world/index.js";
import { createReconcileRule } from "../../functions/reconcile-rule/index.js";
import { CORE_EVENTS, EventRequests } from "./support/events.js";
import type { KubeClient, ResourceType } from "../../shared/kube/index.js";
import { requireKind } from "../../shared/kinds/index.js";
import { SyncWorld } from "./sync-harness.js";
import { intercepting } from "./support/acting-before.js";

jest.setTimeout(90_000);

const PURPOSE = "cnf1";
const POLICY = { members: [{ network: "ovn-net1", metric: 1, weight: 2 }] };
interface DescribedEvent {
  readonly type: string;
  readonly reason: string;
  readonly message: string;
  readonly count: number;
  readonly reportingComponent: string;
}

/** The Events `kubectl describe mwan3policy <name>` lists, oldest first. */
async function describeEvents(world: SyncWorld, kind: string, name: string) {
  const rule = await world.readRule(kind, name);
  const selector = [
    `involvedObject.kind=${kind}`,
    `involvedObject.name=${name}`,
    ...(rule?.metadata.uid ? [`involvedObject.uid=${rule.metadata.uid}`] : []),
  ].join(",");
  const events = await world.kube.list(CORE_EVENTS, {
    namespace: world.namespace,
    fieldSelector: selector,
  });
  const when = (e: unknown): string => String((e as { eventTime?: string }).eventTime ?? "");
  return events
    .sort((a, b) => when(a).localeCompare(when(b)))
    .map((e): DescribedEvent => {
      const raw = e as unknown as Record<string, unknown> & {
        series?: { count?: number };
        count?: number;
      };
      return {
        type: String(raw["type"]),
        reason: String(raw["reason"]),
        message: String(raw["message"]),
        count: raw.series?.count ?? raw.count ?? 1,
        reportingComponent: String(raw["reportingComponent"]),
      };
    });
}

const reasons = (events: readonly DescribedEvent[]): string[] => events.map((e) => e.reason);

describe("Events on a rule, as kubectl describe shows them", () => {
  let world: SyncWorld;
  let cnf: Cnf;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
  });
  afterEach(() => world.close());

  it("Applied once on all pods; an unchanged redelivery records nothing more", async () => {
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });

    const events = await describeEvents(world, "Mwan3Policy", "policy1");
    expect(events).toEqual([
      {
        type: "Normal",
        reason: "Applied",
        message: `applied on every ready pod of CNF ${cnf.name}`,
        count: 1,
        reportingComponent: "sdewan.akraino.org/reconcile-rule",
      },
    ]);
  });

  it("Applied while a pod is down, nothing when it is back, DeletedFromCNF at the end", async () => {
    const pod2 = cnf.pods[1] as CnfPod;
    await world.setPodReady(pod2, false);
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    await world.reconcile("Mwan3Policy", "policy1");
    await world.setPodReady(pod2, true);
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    await world.deleteRule("Mwan3Policy", "policy1");
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });

    // The rule is gone, so select by name and kind only (its uid is not known any more).
    const events = await describeEvents(world, "Mwan3Policy", "policy1");
    // Held by the only ready pod: applied (ADR 0016); the pod's return changes nothing it says.
    expect(reasons(events)).toEqual(["Applied", "DeletedFromCNF"]);
    expect(events[0]?.message).toBe(`applied on every ready pod of CNF ${cnf.name}`);
  });

  it("Rejected with the CNF's own message when the CNF refuses the rule", async () => {
    (cnf.pods[0] as CnfPod).sim.failNext({
      kind: "status",
      status: 400,
      method: "PUT",
      collection: "mwan3/policies",
      count: 1,
    });
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "permanent" });

    const events = await describeEvents(world, "Mwan3Policy", "policy1");
    expect(events.map((e) => `${e.type} ${e.reason}`)).toEqual(["Warning Rejected"]);
    expect(events[0]?.message).toMatch(/^CNF rejected the rule on pod /);
  });

  it("DriftRepaired from on-deployment-ready when a pod's copy was changed behind its back", async () => {
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    const pod = cnf.pods[0] as CnfPod;
    const policies = requireKind("Mwan3Policy").cnf;
    await world.cnfClient(pod).update(policies, {
      name: "policy1",
      members: [{ interface: "net1", metric: "7", weight: "7" }],
    });
    expect(await world.syncCnf(cnf)).toMatchObject({ kind: "done" });

    const events = await describeEvents(world, "Mwan3Policy", "policy1");
    expect(events.map((e) => `${e.reason} ${e.reportingComponent}`)).toEqual([
      "Applied sdewan.akraino.org/reconcile-rule",
      "DriftRepaired sdewan.akraino.org/on-deployment-ready",
    ]);
  });

  it("Stalled, saying what to fix, for a rule its CNF can never take", async () => {
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, {
      members: [{ network: "no-such-net", metric: 1, weight: 2 }],
    });
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "permanent" });

    const events = await describeEvents(world, "Mwan3Policy", "policy1");
    expect(events.map((e) => `${e.type} ${e.reason}`)).toEqual(["Warning Stalled"]);
    expect(events[0]?.message).toContain("no-such-net");
  });

  it("a CNF error that echoes the pre-shared key: no Event, status or log line holds it", async () => {
    const secret = "psk-7c1e9d-not-for-your-eyes";
    await world.createSampleRule(PURPOSE, "IpsecProposal");
    expect(await world.reconcile("IpsecProposal", "proposal1")).toMatchObject({ kind: "done" });
    const site = sampleRule("IpsecSite");
    for (const pod of cnf.pods) {
      pod.sim.failNext({
        kind: "status",
        status: 400,
        method: "PUT",
        message: `Field[pre_shared_key] checked failed: ${secret} is too weak`,
        collection: "ipsec/remotes",
        count: 100,
      });
    }
    await world.createRule("IpsecSite", site.name, PURPOSE, {
      ...structuredClone(site.spec),
      pre_shared_key: secret,
    });
    expect(await world.reconcile("IpsecSite", site.name)).toMatchObject({ kind: "permanent" });

    const events = await describeEvents(world, "IpsecSite", site.name);
    expect(events.map((e) => e.reason)).toEqual(["Rejected"]);
    expect(events[0]?.message).toContain("[redacted] is too weak");
    const view = await world.ruleView("IpsecSite", site.name);
    expect(view?.message).toContain("[redacted]");
    const shown = JSON.stringify({ events, message: view?.message, log: world.log.lines });
    expect(shown).not.toContain(secret);
  });

  it("a burst of 20 new rules delivered 8 at a time: one Applied Event each, one API request each", async () => {
    const requests = new EventRequests();
    const fn = createReconcileRule({ kube: () => requests.wrap(world.kube), env: world.env });
    const names = Array.from({ length: 20 }, (_, i) => `policy${i}`);
    for (const name of names) await world.createRule("Mwan3Policy", name, PURPOSE, POLICY);
    const ctx = world.context();
    const limit = pLimit(8);
    await world.watchCacheCaughtUp();
    const outcomes = await Promise.all(
      names.map((name) => limit(() => fn.handle(world.ruleEvent("Mwan3Policy", name), ctx))),
    );

    expect(outcomes.every((o) => o.kind === "done")).toBe(true);
    expect(ctx.calls).toMatchObject({ eventsRecorded: 20, eventRequests: 20 });
    expect(requests.count).toBe(20);
  });

  it("a storm of 100 identical failures is one Event with count 100", async () => {
    for (const pod of cnf.pods) {
      pod.sim.failNext({
        kind: "status",
        status: 503,
        method: "PUT",
        collection: "mwan3/policies",
        count: 10_000,
      });
    }
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    for (let i = 0; i < 100; i += 1) {
      expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "retry" });
    }

    const events = await describeEvents(world, "Mwan3Policy", "policy1");
    expect(events).toEqual([
      expect.objectContaining({ type: "Warning", reason: "Retrying", count: 100 }),
    ]);
  });
});

/** `real`, except that every Event write fails (forbidden) or never answers. */
function withBrokenEvents(real: KubeClient, mode: "refused" | "hanging"): KubeClient {
  const isEvent = (type: unknown) => (type as ResourceType | undefined)?.plural === "events";
  const broken = (type: unknown, call: () => Promise<unknown>): Promise<unknown> => {
    if (!isEvent(type)) return call();
    if (mode === "refused") return Promise.reject(new Error("events are forbidden here"));
    return new Promise(() => undefined);
  };
  return intercepting(real, ["create", "get", "mergePatch"], (_, args, call) =>
    broken(args[0], call),
  );
}

describe("Events are best-effort", () => {
  let world: SyncWorld;

  beforeEach(async () => {
    world = await SyncWorld.create();
    await world.createCnf(PURPOSE, { pods: 2 });
  });
  afterEach(() => world.close());

  it.each(["refused", "hanging"] as const)(
    "Event writes %s: the rule is still applied, and the drop is counted",
    async (mode) => {
      await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
      const fn = createReconcileRule({
        kube: () => withBrokenEvents(world.kube, mode),
        env: world.env,
      });
      const ctx = world.context();
      const outcome = await fn.handle(world.ruleEvent("Mwan3Policy", "policy1"), ctx);

      expect(outcome).toMatchObject({ kind: "done", result: "created" });
      expect(ctx.calls).toMatchObject({ eventsDropped: 1 });
      expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({ inSync: true });
    },
  );
});
