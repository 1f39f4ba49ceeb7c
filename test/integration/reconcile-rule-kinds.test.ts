// Every rule kind, with its manifests/samples spec, through its life on a two-pod CNF: created,
// re-delivered unchanged (zero CNF writes, zero restarts, no status write), updated, deleted.
import { jest } from "@jest/globals";
import { RULE_KIND_NAMES, requireKind } from "../../shared/kinds/index.js";
import { sampleRule, type Cnf } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(60_000);

const PURPOSE = "cnf-1";

interface KindCase {
  readonly name: string;
  /** Merged into the sample spec for the update. */
  readonly update: Record<string, unknown>;
  /** What each pod's object must then contain. */
  readonly updated: Record<string, unknown>;
}

const CASES: Readonly<Record<(typeof RULE_KIND_NAMES)[number], KindCase>> = {
  Mwan3Policy: {
    name: "balance-1",
    update: {
      members: [
        { network: "ovn-net1", metric: 2, weight: 5 },
        { network: "ovn-net2", metric: 3, weight: 3 },
      ],
    },
    updated: {
      members: [
        { interface: "net1", metric: "2", weight: "5" },
        { interface: "net2", metric: "3", weight: "3" },
      ],
    },
  },
  Mwan3Rule: { name: "http-rule", update: { dest_port: "443" }, updated: { dest_port: "443" } },
  FirewallZone: { name: "lan1", update: { input: "REJECT" }, updated: { input: "REJECT" } },
  FirewallSNAT: {
    name: "snat-lan1",
    update: { src_dip: "1.2.3.5" },
    updated: { src_dip: "1.2.3.5", target: "SNAT" },
  },
  FirewallDNAT: {
    name: "dnat-wan1",
    update: { dest_port: "2222" },
    updated: { dest_port: "2222", target: "DNAT" },
  },
  FirewallForwarding: {
    name: "lan1-to-wan1",
    update: { src: "wan1", dest: "lan1" },
    updated: { src: "wan1", dest: "lan1" },
  },
  FirewallRule: { name: "reject-80", update: { target: "DROP" }, updated: { target: "DROP" } },
  IpsecProposal: {
    name: "proposal1",
    update: { dh_group: "modp2048" },
    updated: { dh_group: "modp2048" },
  },
  IpsecSite: {
    name: "site1",
    update: { remote: "10.10.10.9" },
    updated: { gateway: "10.10.10.9" },
  },
  IpsecHost: {
    name: "host1",
    update: { remote: "10.10.10.2" },
    updated: { gateway: "10.10.10.2" },
  },
  CNFService: { name: "httpd", update: { dport: "8081" }, updated: { dport: "8081" } },
};

/** Creates and applies the samples `kind`'s sample refers to (zones, policy, proposal). */
async function applyDependencies(world: SyncWorld, kind: string, name: string): Promise<string[]> {
  const refs = requireKind(kind).references(sampleRule(kind, name).spec);
  const unique = [...new Map(refs.map((r) => [`${r.kind}/${r.name}`, r])).values()];
  for (const ref of unique) {
    await world.createSampleRule(PURPOSE, ref.kind, ref.name);
    expect(await world.reconcile(ref.kind, ref.name)).toMatchObject({ kind: "done" });
  }
  return unique.map((r) => `${r.kind}/${r.name}`);
}

describe("every rule kind on a two-pod CNF: create, unchanged re-delivery, update, delete", () => {
  let world: SyncWorld;
  let cnf: Cnf;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
  });
  afterEach(() => world.close());

  it.each(RULE_KIND_NAMES.map((kind) => [kind, CASES[kind]] as const))(
    "%s",
    async (kind, { name, update, updated }) => {
      const entry = requireKind(kind);
      const collection = `${entry.cnf.module}/${entry.cnf.collection}`;
      const service = entry.cnf.restartService;
      const dependencies = await applyDependencies(world, kind, name);
      const sample = await world.createSampleRule(PURPOSE, kind, name);

      world.resetObservations();
      expect(await world.reconcile(kind, name)).toEqual({ kind: "done", result: "created" });
      const created = world.heldObjects(cnf, collection, requireKind(kind).cnfObjectName(name));
      expect(created.every((o) => o !== undefined)).toBe(true);
      expect(world.serviceRestarts(cnf)).toEqual(
        service === null ? [[], []] : [[service], [service]],
      );
      const applied = await world.ruleView(kind, name);
      expect(applied).toMatchObject({ inSync: true, appliedCurrent: true, generation: 1 });
      expect(applied?.finalizers).toEqual([entry.finalizer]);

      world.resetObservations();
      const before = await world.readRule(kind, name);
      expect(await world.reconcile(kind, name)).toEqual({ kind: "done", result: "unchanged" });
      expect(world.cnfWrites(cnf)).toEqual([0, 0]);
      expect(world.serviceRestarts(cnf)).toEqual([[], []]);
      expect((await world.readRule(kind, name))?.metadata.resourceVersion).toBe(
        before?.metadata.resourceVersion,
      );

      await world.patchRuleSpec(kind, name, { ...structuredClone(sample.spec), ...update });
      expect(await world.reconcile(kind, name)).toEqual({ kind: "done", result: "updated" });
      for (const object of world.heldObjects(
        cnf,
        collection,
        requireKind(kind).cnfObjectName(name),
      )) {
        expect(object).toMatchObject(updated);
      }
      expect(await world.ruleView(kind, name)).toMatchObject({
        inSync: true,
        appliedCurrent: true,
        generation: 2,
        condition: { type: "Ready", reason: "Applied" },
      });
      world.resetObservations();
      expect(await world.reconcile(kind, name)).toEqual({ kind: "done", result: "unchanged" });
      expect(world.cnfWrites(cnf)).toEqual([0, 0]);

      await world.deleteRule(kind, name);
      expect(await world.reconcile(kind, name)).toEqual({ kind: "done", result: "deleted" });
      expect(world.heldObjects(cnf, collection, requireKind(kind).cnfObjectName(name))).toEqual([
        undefined,
        undefined,
      ]);
      expect(await world.readRule(kind, name)).toBeUndefined();
      // What it depended on is untouched.
      const holdings = world.holdings(cnf);
      for (const dependency of dependencies) {
        const [depKind = "", depName = ""] = dependency.split("/");
        const dep = requireKind(depKind);
        for (const pod of holdings) {
          expect(pod[`${dep.cnf.module}/${dep.cnf.collection}`]).toContain(
            dep.cnfObjectName(depName),
          );
        }
      }
      // A delete re-delivered after the finalizer went is done, and touches nothing.
      expect(await world.reconcile(kind, name)).toEqual({ kind: "done", result: "gone" });
    },
  );
});
