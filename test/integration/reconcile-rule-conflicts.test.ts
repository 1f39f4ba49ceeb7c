// A CNF's 409 is final for the object as it is: two remotes that give one connection name (a UCI
// section name, held once per CNF) cannot both be applied, whatever the number of retries. The
// second rule gets there only when admission did not run (the webhook was down or not yet
// installed): it must be Stalled with the reason, not retried for ever.
import { jest } from "@jest/globals";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(60_000);

const PURPOSE = "conflicts";
const PROPOSAL = { encryption_algorithm: "aes128", hash_algorithm: "sha256", dh_group: "modp3072" };
const siteSpec = (subnet: string) => ({
  remote: "%any",
  authentication_method: "psk",
  pre_shared_key: "test-only-key-0123",
  crypto_proposal: ["prop1"],
  connections: [{ name: "conn1", conn_type: "tunnel", mode: "start", local_subnet: subnet }],
});

describe("two IpsecSites on one CNF with the same connection name", () => {
  let world: SyncWorld;
  beforeEach(async () => {
    world = await SyncWorld.create();
    await world.createCnf(PURPOSE, { pods: 1 });
    await world.createRule("IpsecProposal", "prop1", PURPOSE, PROPOSAL);
    expect(await world.reconcile("IpsecProposal", "prop1")).toMatchObject({ kind: "done" });
  });
  afterEach(() => world.close());

  it("applies the first and stalls the second with the CNF's conflict, not a retry", async () => {
    await world.createRule("IpsecSite", "site1", PURPOSE, siteSpec("172.16.0.0/24"));
    expect(await world.reconcile("IpsecSite", "site1")).toMatchObject({ kind: "done" });
    await world.createRule("IpsecSite", "site2", PURPOSE, siteSpec("172.16.1.0/24"));
    expect(await world.reconcile("IpsecSite", "site2")).toMatchObject({ kind: "permanent" });
    const view = await world.ruleView("IpsecSite", "site2");
    expect(view).toMatchObject({
      inSync: false,
      condition: { type: "Stalled", reason: "CNFRejected" },
    });
    expect(view?.message).toContain("HTTP 409");
    expect(view?.message).toContain("connection name");
    expect(await world.ruleView("IpsecSite", "site1")).toMatchObject({ inSync: true });
  });
});
