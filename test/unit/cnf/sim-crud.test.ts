import { startCnfSim, type CnfSim } from "../../../dev/cnf-sim/index.js";
import { restApi, samples } from "./support.js";

describe("CNF simulator: create, read, update, delete (reference 2.2)", () => {
  let sim: CnfSim;
  let api: Awaited<ReturnType<typeof restApi>>;
  beforeEach(async () => {
    sim = await startCnfSim({ host: "127.0.0.23" });
    api = await restApi(sim);
  });
  afterEach(() => sim.close());

  it("POST answers 201 with the object re-read from storage, members named <policy>_<interface>", async () => {
    const reply = await api.post("mwan3/policies", samples.policy);
    expect(reply.status).toBe(201);
    expect(reply.json).toEqual({
      name: "balance1",
      members: [
        { name: "balance1_net0", interface: "net0", metric: "2", weight: "2" },
        { name: "balance1_net1", interface: "net1", metric: "3", weight: "3" },
      ],
    });
  });

  it("stores trimmed strings, drops empty, null and unknown fields", async () => {
    await api.post("mwan3/policies", samples.policy);
    const reply = await api.post("mwan3/rules", {
      name: " r1 ",
      policy: " balance1 ",
      proto: "",
      family: null,
      dest_port: " 443 ",
      colour: "blue",
    });
    expect(reply.status).toBe(201);
    expect(reply.json).toEqual({ name: "r1", policy: "balance1", dest_port: "443" });
  });

  it("POST of an existing named object answers 409; the generic handler loses the message", async () => {
    await api.post("mwan3/policies", samples.policy);
    await api.post("mwan3/rules", samples.rule);
    await api.post("ipsec/proposals", samples.proposal);
    expect(await api.post("mwan3/rules", samples.rule)).toMatchObject({
      status: 409,
      json: { message: "" },
    });
    expect(await api.post("ipsec/proposals", samples.proposal)).toMatchObject({
      status: 409,
      json: { message: "" },
    });
    // The policy has its own create, which keeps the text.
    expect(await api.post("mwan3/policies", samples.policy)).toMatchObject({
      status: 409,
      json: { message: "Conflict" },
    });
  });

  it("answers 409 when a mwan3 name is taken by another kind in the same UCI file", async () => {
    await api.post("mwan3/policies", samples.policy);
    expect((await api.post("mwan3/rules", { ...samples.rule, name: "balance1" })).status).toBe(409);
    expect((await api.post("mwan3/rules", { ...samples.rule, name: "net0" })).status).toBe(409);
  });

  it("accepts a duplicate firewall object (anonymous UCI sections), and DELETE removes every copy", async () => {
    expect((await api.post("firewall/zones", samples.zone)).status).toBe(201);
    expect((await api.post("firewall/zones", { ...samples.zone, input: "DROP" })).status).toBe(201);
    expect(sim.state().collections["firewall/zones"]).toHaveLength(2);
    // GET item returns the first match.
    expect((await api.get("firewall/zones/lan0")).json).toMatchObject({ input: "ACCEPT" });
    expect((await api.delete("firewall/zones/lan0")).status).toBe(200);
    expect(sim.state().collections["firewall/zones"]).toEqual([]);
  });

  it("PUT creates an absent object (upsert) and answers 200", async () => {
    await api.post("mwan3/policies", samples.policy);
    const reply = await api.put("mwan3/rules/sample", samples.rule);
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ name: "sample", policy: "balance1" });
  });

  it("PUT replaces the whole object, takes the name from the URL, and collapses firewall duplicates", async () => {
    await api.post("firewall/zones", samples.zone);
    await api.post("firewall/zones", samples.zone);
    const reply = await api.put("firewall/zones/lan0", {
      name: "other",
      network: ["net2"],
      input: "DROP",
    });
    expect(reply).toMatchObject({
      status: 200,
      json: { name: "lan0", network: ["net2"], input: "DROP" },
    });
    expect(sim.state().collections["firewall/zones"]).toEqual([
      { name: "lan0", network: ["net2"], input: "DROP" },
    ]);
  });

  it("PUT validates before replacing: an invalid body leaves the object as it was", async () => {
    await api.post("firewall/zones", samples.zone);
    expect((await api.put("firewall/zones/lan0", { input: "MAYBE" })).status).toBe(400);
    expect((await api.get("firewall/zones/lan0")).json).toEqual(samples.zone);
  });

  it("GET of a missing item answers 404 Cannot find <type>[<name>]", async () => {
    expect(await api.get("mwan3/rules/ghost")).toMatchObject({
      status: 404,
      json: { message: "Cannot find rule[ghost]" },
    });
    expect(await api.get("firewall/forwardings/ghost")).toMatchObject({
      status: 404,
      json: { message: "Cannot find forwarding[ghost]" },
    });
  });

  it('GET of a collection answers {"<collection>": [...]} in creation order', async () => {
    await api.post("firewall/zones", samples.zone);
    await api.post("firewall/zones", samples.zone2);
    const reply = await api.get("firewall/zones");
    expect(reply.json).toEqual({ zones: [samples.zone, samples.zone2] });
  });

  it('DELETE answers 200 {"message":"success"} as text/plain, then 404 <type> <name> is not defined', async () => {
    await api.post("ipsec/proposals", samples.proposal);
    const first = await api.delete("ipsec/proposals/prop1");
    expect(first).toMatchObject({ status: 200, text: '{"message":"success"}' });
    expect(first.headers["content-type"]).toBe("text/plain");
    expect(await api.delete("ipsec/proposals/prop1")).toMatchObject({
      status: 404,
      json: { message: "proposal prop1 is not defined" },
    });
  });

  it("rejects a body that is not JSON with 400 Body parse error", async () => {
    const reply = await api.post("firewall/zones", "{not json");
    expect(reply.status).toBe(400);
    expect(String((reply.json as { message: string }).message)).toMatch(/^Body parse error: /);
  });

  it("requires a non-empty string name on POST", async () => {
    for (const name of [undefined, "", "   ", 42]) {
      expect(await api.post("ipsec/proposals", { ...samples.proposal, name })).toMatchObject({
        status: 400,
        json: { message: "Field[name] checked failed: required" },
      });
    }
  });

  it("stores an ipsec remote with its connections, adds enabled=1, and deletes the connections with it", async () => {
    await api.post("ipsec/proposals", samples.proposal);
    const reply = await api.post("ipsec/remotes", samples.remote);
    expect(reply.status).toBe(201);
    expect(reply.json).toEqual({ ...samples.remote, enabled: "1" });
    // A connection name is a UCI section in the ipsec file: reusing it elsewhere conflicts.
    const clash = { ...samples.remote, name: "site2" };
    expect((await api.post("ipsec/remotes", clash)).status).toBe(409);
    expect((await api.delete("ipsec/remotes/site1")).status).toBe(200);
    expect((await api.post("ipsec/remotes", clash)).status).toBe(201);
  });

  it("keeps unchecked fields as given and silently drops if_id, which the CNF does not know", async () => {
    await api.post("ipsec/proposals", samples.proposal);
    const body = {
      ...samples.remote,
      connections: [{ ...samples.remote.connections[0], if_id: "7", mark: "42" }],
    };
    const reply = await api.post("ipsec/remotes", body);
    expect((reply.json as { connections: unknown[] }).connections[0]).toEqual({
      ...samples.remote.connections[0],
      mark: "42",
    });
  });
});
