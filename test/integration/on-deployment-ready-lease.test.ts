// One CNF-wide sync per CNF at a time (ADR 0008), against the real API server: a pod restart
// delivers a Pod event and a Deployment event at once, and the CNF is written once, not twice.
import { jest } from "@jest/globals";
import { LEASES } from "../../shared/kube/index.js";
import { cnfLeaseName } from "../../shared/sync/plan-cnf-lease.js";
import { microTime } from "../../shared/core/micro-time.js";
import { holdingsOf, sampleRules, type Cnf, type CnfPod } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";
import { waitUntil } from "./support/wait.js";

jest.setTimeout(60_000);

const PURPOSE = "cnf1";
const SAMPLES = sampleRules().length;

describe("one sync per CNF at a time, coordinated through a Lease", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  let restarted: CnfPod;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    for (const sample of sampleRules()) {
      await world.createRule(sample.kind, sample.name, PURPOSE, structuredClone(sample.spec));
    }
    expect(await world.syncCnf(cnf)).toEqual({ kind: "done", result: `${SAMPLES} created` });
    restarted = cnf.pods[0] as CnfPod;
    await world.crashPod(restarted);
    await world.syncCnf(cnf); // the Deployment's Event now says 1/2 pods ready
  });
  afterEach(() => world.close());

  const leaseKey = () => ({
    namespace: world.namespace,
    name: cnfLeaseName({ namespace: world.namespace, purpose: PURPOSE }),
  });

  /** A Lease on the CNF held by another sync, taken `agoSeconds` ago for `seconds`. */
  async function holdLease(agoSeconds: number, seconds = 30): Promise<void> {
    const time = microTime(new Date(Date.now() - agoSeconds * 1000).toISOString());
    await world.kube.create(LEASES, {
      metadata: leaseKey(),
      spec: {
        holderIdentity: "another-instance/sync",
        leaseDurationSeconds: seconds,
        acquireTime: time,
        renewTime: time,
      },
    });
  }

  it("a Pod event and a Deployment event delivered at once write the restarted pod's objects once and restart each service once", async () => {
    world.resetObservations();
    await world.setPodReady(restarted, true);

    const outcomes = await Promise.all([
      world.cnfObjectEvent("Pod", restarted.name),
      world.cnfObjectEvent("Deployment", cnf.name),
    ]);

    expect(outcomes.map((o) => o.kind)).toEqual(["done", "done"]);
    expect(world.holdings(cnf)).toEqual([holdingsOf(), holdingsOf()]);
    expect(world.cnfWrites(cnf)).toEqual([SAMPLES, 0]);
    expect(world.serviceRestarts(cnf)).toEqual([["firewall", "ipsec", "mwan3"], []]);
    expect(await world.kube.get(LEASES, leaseKey())).toBeUndefined();
  });

  it("a held Lease taken after the Pod's change covers the event: 202, nothing read from the CNF", async () => {
    await world.setPodReady(restarted, true);
    await holdLease(0);
    world.resetObservations();

    expect(await world.cnfObjectEvent("Pod", restarted.name)).toEqual({
      kind: "done",
      result: `covered: a sync of CNF ${world.namespace}/${PURPOSE} that began after this change is running`,
    });
    expect(restarted.sim.requests()).toEqual([]);
    expect(world.holdings(cnf)[0]).not.toEqual(holdingsOf());
  });

  it("a held Lease taken before the Pod's change: the event waits for its release, then syncs", async () => {
    await holdLease(0);
    await world.setPodReady(restarted, true);
    world.resetObservations();

    const pending = world.cnfObjectEvent("Pod", restarted.name);
    // The Pod read, the refused create, the read of the held Lease and its re-reads.
    await waitUntil("the event to find the Lease held", () => world.calls.api >= 4);
    expect(restarted.sim.requests()).toEqual([]);
    await world.kube.delete(LEASES, leaseKey());

    expect(await pending).toEqual({ kind: "done", result: `${SAMPLES} re-applied` });
    expect(world.holdings(cnf)).toEqual([holdingsOf(), holdingsOf()]);
  });

  it("a Lease that stays held past CNF_SYNC_LEASE_WAIT_MS: 503, the CNF untouched, redelivery syncs it", async () => {
    await holdLease(0);
    await world.setPodReady(restarted, true);
    world.env["CNF_SYNC_LEASE_WAIT_MS"] = "200";
    world.resetObservations();

    const outcome = await world.cnfObjectEvent("Pod", restarted.name);
    expect(outcome).toMatchObject({ kind: "retry" });
    expect(outcome.kind === "retry" && outcome.reason).toContain("another-instance/sync");
    expect(restarted.sim.requests()).toEqual([]);
  });

  it("an expired Lease (its holder died) is taken over: the event syncs at once", async () => {
    await world.setPodReady(restarted, true);
    await holdLease(60, 30);

    expect(await world.cnfObjectEvent("Pod", restarted.name)).toEqual({
      kind: "done",
      result: `${SAMPLES} re-applied`,
    });
    expect(world.holdings(cnf)).toEqual([holdingsOf(), holdingsOf()]);
    expect(await world.kube.get(LEASES, leaseKey())).toBeUndefined();
  });
});
