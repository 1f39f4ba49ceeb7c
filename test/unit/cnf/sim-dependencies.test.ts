import { startCnfSim, type CnfSim } from "../../../dev/cnf-sim/index.js";
import { restApi, samples } from "./support.js";

describe("CNF simulator: references must resolve on create (upstream answers 400)", () => {
  let sim: CnfSim;
  let api: Awaited<ReturnType<typeof restApi>>;
  beforeEach(async () => {
    sim = await startCnfSim({ host: "127.0.0.25", interfaces: ["net0", "net1"] });
    api = await restApi(sim);
  });
  afterEach(() => sim.close());

  it("refuses a mwan3 rule whose policy does not exist, then accepts it once the policy is there", async () => {
    expect(await api.post("mwan3/rules", samples.rule)).toMatchObject({
      status: 400,
      json: {
        message: "Field[policy] checked failed: invalid policy [Policy[balance1] is not definied]",
      },
    });
    await api.post("mwan3/policies", samples.policy);
    expect((await api.post("mwan3/rules", samples.rule)).status).toBe(201);
  });

  it("refuses a policy member on an interface the pod does not have", async () => {
    const body = { name: "p", members: [{ interface: "net7", metric: "1", weight: "1" }] };
    expect((await api.post("mwan3/policies", body)).json).toEqual({
      message:
        "Field[members] checked failed: Incorrect policy member [Field[interface] checked failed: invalid interface [Interface[net7] is not definied]]",
    });
  });

  it("refuses a zone on a network the pod does not have", async () => {
    expect(
      (await api.post("firewall/zones", { name: "z", network: ["net0", "net9"] })).json,
    ).toEqual({
      message: "Field[network] checked failed: invalid network [Interface[net9] is not definied]",
    });
  });

  it.each([
    [
      "firewall/redirects",
      samples.snat,
      "Field[dest] checked failed: invalid dest [Zone[wan0] is not definied]",
    ],
    [
      "firewall/redirects",
      samples.dnat,
      "Field[src] checked failed: invalid src [Zone[wan0] is not definied]",
    ],
    [
      "firewall/rules",
      samples.fwRule,
      "Field[src] checked failed: invalid src [Zone[wan0] is not definied]",
    ],
    [
      "firewall/forwardings",
      samples.forwarding,
      "Field[src] checked failed: invalid src [Zone[lan0] is not definied]",
    ],
  ])("refuses %s referring to a zone that does not exist", async (collection, body, message) => {
    expect(await api.post(collection, body)).toMatchObject({ status: 400, json: { message } });
  });

  it("refuses a remote, and a remote's connection, whose proposal does not exist", async () => {
    expect((await api.post("ipsec/remotes", samples.remote)).json).toEqual({
      message:
        "Field[crypto_proposal] checked failed: invalid crypto_proposal [Proposal[prop1] is not definied]",
    });
    await api.post("ipsec/proposals", { ...samples.proposal, name: "other" });
    const connOnly = { ...samples.remote, crypto_proposal: ["other"] };
    expect((await api.post("ipsec/remotes", connOnly)).json).toEqual({
      message:
        "Field[connections] checked failed: invalid connection [Field[crypto_proposal] checked failed: invalid crypto_proposal [Proposal[prop1] is not definied]]",
    });
  });
});

describe("CNF simulator: deleting what is still used answers 400 <type> <name> is used", () => {
  let sim: CnfSim;
  let api: Awaited<ReturnType<typeof restApi>>;
  beforeEach(async () => {
    sim = await startCnfSim({ host: "127.0.0.25" });
    api = await restApi(sim);
  });
  afterEach(() => sim.close());

  it("keeps a policy while a rule uses it, and lets it go after the rule is deleted", async () => {
    await api.post("mwan3/policies", samples.policy);
    await api.post("mwan3/rules", samples.rule);
    expect(await api.delete("mwan3/policies/balance1")).toMatchObject({
      status: 400,
      json: { message: "policy balance1 is used" },
    });
    await api.delete("mwan3/rules/sample");
    expect((await api.delete("mwan3/policies/balance1")).status).toBe(200);
  });

  it("lets a used policy be updated with PUT (upstream skips the check on update)", async () => {
    await api.post("mwan3/policies", samples.policy);
    await api.post("mwan3/rules", samples.rule);
    const reply = await api.put("mwan3/policies/balance1", {
      members: [{ interface: "net2", metric: "1", weight: "9" }],
    });
    expect(reply.status).toBe(200);
    expect((await api.get("mwan3/rules/sample")).json).toMatchObject({ policy: "balance1" });
  });

  it.each([
    ["a redirect", "firewall/redirects", samples.snat, "snat1"],
    ["a rule", "firewall/rules", samples.fwRule, "reject80"],
    ["a forwarding", "firewall/forwardings", { name: "fwd", src: "lan0", dest: "wan0" }, "fwd"],
  ])("keeps a zone while %s refers to it", async (_what, collection, body, name) => {
    await api.post("firewall/zones", samples.zone);
    await api.post("firewall/zones", samples.zone2);
    expect((await api.post(collection, body)).status).toBe(201);
    expect(await api.delete("firewall/zones/wan0")).toMatchObject({
      status: 400,
      json: { message: "zone wan0 is used" },
    });
    await api.delete(`${collection}/${name}`);
    expect((await api.delete("firewall/zones/wan0")).status).toBe(200);
  });

  it("keeps a proposal while a remote or one of its connections lists it", async () => {
    await api.post("ipsec/proposals", samples.proposal);
    await api.post("ipsec/proposals", { ...samples.proposal, name: "prop2" });
    const remote = {
      ...samples.remote,
      crypto_proposal: ["prop2"],
      connections: [{ ...samples.remote.connections[0], crypto_proposal: ["prop1"] }],
    };
    await api.post("ipsec/remotes", remote);
    expect((await api.delete("ipsec/proposals/prop1")).json).toEqual({
      message: "proposal prop1 is used",
    });
    expect((await api.delete("ipsec/proposals/prop2")).json).toEqual({
      message: "proposal prop2 is used",
    });
    await api.delete("ipsec/remotes/site1");
    expect((await api.delete("ipsec/proposals/prop1")).status).toBe(200);
    expect((await api.delete("ipsec/proposals/prop2")).status).toBe(200);
  });
});
