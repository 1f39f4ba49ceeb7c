import * as z from "zod";
import { startCnfSim, totalWrites, type CnfSim } from "../../../dev/cnf-sim/index.js";
import {
  CnfBadReplyError,
  CnfClient,
  CnfCredentials,
  CnfHttpError,
  CnfSessionCache,
  classifyCnfFailure,
} from "../../../shared/cnf/index.js";
import { samples } from "./support.js";

const ref = {
  policies: { module: "mwan3", collection: "policies", update: "put" },
  rules: { module: "mwan3", collection: "rules", update: "put" },
  zones: { module: "firewall", collection: "zones", update: "put" },
  redirects: { module: "firewall", collection: "redirects", update: "put" },
  proposals: { module: "ipsec", collection: "proposals", update: "put" },
  remotes: { module: "ipsec", collection: "remotes", update: "put" },
  services: { module: "service", collection: "services", update: "delete-then-create" },
} as const;

describe("CNF client: collections and the service restart", () => {
  let sim: CnfSim;
  let client: CnfClient;
  beforeEach(async () => {
    sim = await startCnfSim({ host: "127.0.0.42" });
    client = new CnfClient({
      baseUrl: sim.url,
      credentials: new CnfCredentials("root", ""),
      sessions: new CnfSessionCache(),
      retry: { minDelayMs: 1, maxDelayMs: 2 },
    });
  });
  afterEach(() => sim.close());

  it("creates, reads, lists, updates and deletes a mwan3 policy", async () => {
    expect(await client.create(ref.policies, samples.policy)).toMatchObject({ name: "balance1" });
    expect(await client.get(ref.policies, "balance1")).toMatchObject({
      members: [{ interface: "net0" }, { interface: "net1" }],
    });
    expect((await client.list(ref.policies)).map((p) => p.name)).toEqual(["balance1"]);
    const updated = await client.update(ref.policies, {
      name: "balance1",
      members: [{ interface: "net2", metric: "1", weight: "1" }],
    });
    expect(updated).toMatchObject({ members: [{ name: "balance1_net2" }] });
    expect(await client.delete(ref.policies, "balance1")).toBe("deleted");
    expect(await client.get(ref.policies, "balance1")).toBeUndefined();
  });

  it("reads an absent object as undefined and deletes it as 'absent'", async () => {
    expect(await client.get(ref.rules, "ghost")).toBeUndefined();
    expect(await client.delete(ref.rules, "ghost")).toBe("absent");
  });

  it("updates an absent object by creating it (PUT is an upsert), with one write", async () => {
    await client.update(ref.zones, samples.zone);
    await client.update(ref.redirects, { ...samples.dnat, src: "lan0" });
    expect(sim.state().collections["firewall/zones"]).toEqual([samples.zone]);
    expect(totalWrites(sim.counters())).toBe(2);
  });

  it("reads an empty collection as an empty list", async () => {
    expect(await client.list(ref.remotes)).toEqual([]);
  });

  it("updates a CNFService by DELETE then POST, since that collection has no PUT", async () => {
    await client.update(ref.services, samples.service);
    await client.update(ref.services, { ...samples.service, dport: "9090" });
    expect(await client.get(ref.services, "svc1")).toEqual({ ...samples.service, dport: "9090" });
    expect(sim.counters().collections["service/services"]).toEqual({ reads: 1, writes: 4 });
  });

  it("restarts a service on the CNF", async () => {
    await client.restartService("firewall");
    await client.restartService("ipsec", "reload");
    expect(sim.serviceActions().map((a) => a.command)).toEqual([
      "/etc/init.d/firewall restart",
      "/etc/init.d/ipsec restart",
    ]);
  });

  it("surfaces a CNF validation error as a permanent CnfHttpError with the CNF's message, not retried", async () => {
    const error = await client
      .update(ref.zones, { ...samples.zone, name: "averylongname" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CnfHttpError);
    expect(error).toMatchObject({
      status: 400,
      rejection: "invalid",
      attempts: 1,
      cnfMessage:
        "Field[name] checked failed: invalid zone name [The length of Name shall not exceed 11 characters]",
    });
    expect(classifyCnfFailure(error)).toBe("permanent");
    expect(sim.counters().collections["firewall/zones"]?.writes).toBe(1);
  });

  it("classifies a missing policy, zone or proposal as a dependency error", async () => {
    const missingPolicy = await client.update(ref.rules, samples.rule).catch((e: unknown) => e);
    expect(missingPolicy).toMatchObject({ rejection: "dependency-missing" });
    expect(classifyCnfFailure(missingPolicy)).toBe("dependency");
    const missingProposal = await client
      .update(ref.remotes, samples.remote)
      .catch((e: unknown) => e);
    expect(classifyCnfFailure(missingProposal)).toBe("dependency");
  });

  it("classifies deleting a policy still in use as a dependency error", async () => {
    await client.update(ref.policies, samples.policy);
    await client.update(ref.rules, samples.rule);
    const error = await client.delete(ref.policies, "balance1").catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 400,
      rejection: "in-use",
      cnfMessage: "policy balance1 is used",
    });
    expect(classifyCnfFailure(error)).toBe("dependency");
  });

  it("reports a POST of an existing object as a permanent conflict without repeating the POST", async () => {
    await client.create(ref.proposals, samples.proposal);
    const error = await client.create(ref.proposals, samples.proposal).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 409, rejection: "conflict", attempts: 1 });
    expect(classifyCnfFailure(error)).toBe("permanent");
    expect((error as Error).message).toContain("a section name this one uses");
  });

  it("keeps the message of a CNFService error whose body is two JSON texts", async () => {
    const error = await client
      .create(ref.services, { ...samples.service, port: "0" })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 416,
      cnfMessage: "Invalid Port Range",
      rejection: "invalid",
    });
  });

  it("validates replies with a per-collection schema when given one", async () => {
    await client.update(ref.proposals, samples.proposal);
    const strict = z.looseObject({ name: z.string(), encryption_algorithm: z.enum(["aes256"]) });
    const error = await client
      .get(ref.proposals, "prop1", { item: strict })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CnfBadReplyError);
    expect(error).toMatchObject({ code: "bad-reply" });
    expect(
      await client.get(ref.proposals, "prop1", { item: z.looseObject({ name: z.string() }) }),
    ).toMatchObject({
      dh_group: "modp3072",
    });
  });
});
