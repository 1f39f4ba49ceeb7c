import {
  findObjectCollisions,
  planPodWrites,
  servicesToRestart,
  type HeldObject,
  type PodHoldings,
  type RuleTarget,
} from "../../../shared/sync/plan-writes.js";

function target(over: Partial<RuleTarget> & { key: string }): RuleTarget {
  const objectName = over.objectName ?? over.key.split("/")[1] ?? over.key;
  return {
    kind: over.key.split("/")[0] ?? "",
    collection: "firewall/zones",
    objectName,
    service: "firewall",
    rank: 0,
    desired: { name: objectName, v: "1" },
    updatable: true,
    matches: (actual: HeldObject) => actual["v"] === "1",
    ...over,
  };
}

function holdings(entries: Record<string, HeldObject[]>): PodHoldings {
  return new Map(
    Object.entries(entries).map(([c, objs]) => [c, new Map(objs.map((o) => [o.name, o]))]),
  );
}

describe("planPodWrites", () => {
  it.each([
    ["absent on the pod -> create", {}, "create"],
    ["held with other content -> update", { "firewall/zones": [{ name: "z", v: "2" }] }, "update"],
    ["held as desired -> nothing", { "firewall/zones": [{ name: "z", v: "1" }] }, null],
  ])("%s", (_title, held, op) => {
    const plan = planPodWrites([target({ key: "FirewallZone/z" })], holdings(held));
    expect(plan.writes.map((w) => w.op)[0] ?? null).toBe(op);
    expect(plan.unchanged).toEqual(op === null ? ["FirewallZone/z"] : []);
  });

  it.each([
    ["being deleted and held -> delete", { "firewall/zones": [{ name: "z", v: "1" }] }, ["delete"]],
    ["being deleted and already gone -> nothing", {}, []],
  ])("%s", (_title, held, ops) => {
    const plan = planPodWrites([target({ key: "FirewallZone/z", desired: null })], holdings(held));
    expect(plan.writes.map((w) => w.op)).toEqual(ops);
  });

  it("a collection without PUT is recreated instead of updated", () => {
    const plan = planPodWrites(
      [target({ key: "CNFService/s", collection: "service/services", updatable: false })],
      holdings({ "service/services": [{ name: "s", v: "old" }] }),
    );
    expect(plan.writes.map((w) => w.op)).toEqual(["recreate"]);
  });

  it("creates referenced objects first and deletes referrers first", () => {
    const targets = [
      target({ key: "FirewallRule/r1", collection: "firewall/rules", rank: 2 }),
      target({ key: "FirewallZone/z1", rank: 1 }),
      target({ key: "FirewallRule/old", collection: "firewall/rules", rank: 2, desired: null }),
      target({ key: "FirewallZone/oldz", rank: 1, desired: null }),
    ];
    const plan = planPodWrites(
      targets,
      holdings({
        "firewall/rules": [{ name: "old", v: "1" }],
        "firewall/zones": [{ name: "oldz", v: "1" }],
      }),
    );
    expect(plan.writes.map((w) => `${w.op} ${w.ruleKey}`)).toEqual([
      "create FirewallZone/z1",
      "create FirewallRule/r1",
      "delete FirewallRule/old",
      "delete FirewallZone/oldz",
    ]);
  });
});

describe("planPodWrites with a restart still owed", () => {
  const heldAsDesired = holdings({ "firewall/zones": [{ name: "z", v: "1" }] });

  it("an unchanged rule with restartPending is restarted without a write", () => {
    const plan = planPodWrites(
      [target({ key: "FirewallZone/z", restartPending: true })],
      heldAsDesired,
    );
    expect(plan.writes).toEqual([]);
    expect(plan.unchanged).toEqual(["FirewallZone/z"]);
    expect(plan.restartOnly).toEqual([{ ruleKey: "FirewallZone/z", service: "firewall" }]);
  });

  it("a rule being deleted and already gone still gets its owed restart", () => {
    const plan = planPodWrites(
      [target({ key: "FirewallZone/z", desired: null, restartPending: true })],
      holdings({}),
    );
    expect(plan.restartOnly).toEqual([{ ruleKey: "FirewallZone/z", service: "firewall" }]);
  });

  it.each([
    ["no restart owed", { restartPending: false }, heldAsDesired],
    ["a kind without a service", { restartPending: true, service: null }, heldAsDesired],
    ["a changed rule (its write restarts anyway)", { restartPending: true }, holdings({})],
  ])("nothing restart-only for %s", (_t, over, held) => {
    const plan = planPodWrites([target({ key: "FirewallZone/z", ...over })], held);
    expect(plan.restartOnly).toEqual([]);
  });
});

describe("servicesToRestart", () => {
  it("names each touched service once, however many writes touched it", () => {
    const writes = ["a", "b", "c"].map((n) => ({
      op: "create" as const,
      ruleKey: `K/${n}`,
      collection: "c",
      objectName: n,
      body: null,
      service: n === "c" ? "mwan3" : "firewall",
    }));
    expect(servicesToRestart(writes)).toEqual(["firewall", "mwan3"]);
    expect(servicesToRestart([{ ...writes[0]!, service: null }])).toEqual([]);
  });
});

describe("findObjectCollisions", () => {
  it("reports a DNAT and an SNAT that map to one redirect name", () => {
    const collisions = findObjectCollisions([
      target({ key: "FirewallSNAT/x", collection: "firewall/redirects" }),
      target({ key: "FirewallDNAT/x", collection: "firewall/redirects" }),
      target({ key: "FirewallZone/x" }),
    ]);
    expect([...collisions]).toEqual([["FirewallSNAT/x", "FirewallDNAT/x"]]);
  });
});
