// Key material never leaves a function (issue 25 §1): whatever a CNF echoes, a key any rule of
// that CNF holds (its own, another rule's, one read from a Secret) appears in no status, Event,
// log line (any level, retries included) or HTTP reply, whole or in part: redaction runs before
// any cut. The simulator's fault injection plays the CNF that echoes. A key too short to replace
// without revealing it is refused: at admission when plain, when read from its Secret otherwise.
import { randomBytes } from "node:crypto";
import { jest } from "@jest/globals";
import { CoreV1Api } from "@kubernetes/client-node";
import type { Cnf } from "../../dev/world/index.js";
import type { Outcome } from "../../shared/core/outcome.js";
import { EVENTS } from "../../shared/kube/index.js";
import { rule, rules } from "./admission-clients.js";
import { startAdmissionHarness } from "./admission-harness.js";
import { SyncWorld } from "./sync-harness.js";
import { adminKubeConfig } from "./support/cluster.js";

jest.setTimeout(60_000);

const PURPOSE = "leaks";
const REMOTES = "ipsec/remotes";
const PROPOSAL = { encryption_algorithm: "aes128", hash_algorithm: "sha256", dh_group: "modp3072" };

const siteSpec = {
  remote: "%any",
  authentication_method: "psk",
  pre_shared_key_secret_ref: { name: "ipsec-keys", key: "psk" },
  crypto_proposal: ["prop1"],
  connections: [
    {
      name: "conn1",
      conn_type: "tunnel",
      mode: "start",
      local_subnet: "172.16.0.0/24",
      crypto_proposal: ["prop1"],
    },
  ],
};

describe("key material a CNF echoes", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const psk = `PSK-SUPERSECRET-${randomBytes(12).toString("hex")}`;
  const outcomes: Outcome[] = [];

  beforeEach(async () => {
    outcomes.length = 0;
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    await core.createNamespacedSecret({
      namespace: world.namespace,
      body: { metadata: { name: "ipsec-keys" }, stringData: { psk } },
    });
    await world.createRule("IpsecProposal", "prop1", PURPOSE, PROPOSAL);
    await world.createRule("IpsecSite", "site1", PURPOSE, siteSpec);
    expect(await world.reconcile("IpsecProposal", "prop1")).toMatchObject({ kind: "done" });
    expect(await world.reconcile("IpsecSite", "site1")).toMatchObject({ kind: "done" });
  });
  afterEach(() => world.close());

  const reconcile = async (kind: string, name: string) => {
    const outcome = await world.reconcile(kind, name);
    outcomes.push(outcome);
    return outcome;
  };

  /** Every channel: both rules' status, the namespace's Events, every log line, the replies. */
  async function shown(): Promise<string> {
    const rules = await Promise.all([
      world.readRule("IpsecSite", "site1"),
      world.readRule("IpsecProposal", "prop1"),
    ]);
    const events = await world.kube.list(EVENTS, { namespace: world.namespace });
    return JSON.stringify([rules.map((r) => r?.status), events, world.log.lines, outcomes]);
  }

  /** Any 8 consecutive characters of the key: a cut key leaks its prefix. */
  const leaked = (text: string): string[] => {
    const pieces: string[] = [];
    for (let i = 0; i + 8 <= psk.length; i += 1) {
      const piece = psk.slice(i, i + 8);
      if (text.includes(piece)) pieces.push(piece);
    }
    return pieces;
  };

  it("a 200 that is not JSON and holds the key is in no retry log line", async () => {
    for (const pod of cnf.pods) {
      pod.sim.failNext({
        kind: "garbage",
        method: "PUT",
        collection: REMOTES,
        body: `stored ${psk}`,
        count: 6,
      });
    }
    await world.patchRuleSpec("IpsecSite", "site1", { remote: "203.0.113.7" });
    expect((await reconcile("IpsecSite", "site1")).kind).not.toBe("done");
    expect(world.log.lines.some((l) => l.includes("CNF call failed, retrying"))).toBe(true);
    expect(leaked(await shown())).toEqual([]);
  });

  it("a failed restart that echoes another rule's key is not shown on the rule that changed", async () => {
    for (const pod of cnf.pods) {
      pod.sim.failNext({
        kind: "status",
        status: 400,
        collection: "restart",
        message: `ipsec reload failed: secrets { psk = ${psk} }`,
        count: 5,
      });
    }
    await world.patchRuleSpec("IpsecProposal", "prop1", { dh_group: "modp4096" });
    expect((await reconcile("IpsecProposal", "prop1")).kind).not.toBe("done");
    const view = await world.ruleView("IpsecProposal", "prop1");
    expect(view).toMatchObject({ inSync: false, condition: { reason: "RestartFailed" } });
    expect(view?.message).toContain("[redacted]");
    expect(leaked(await shown())).toEqual([]);
  });

  it.each([
    ["a 400 with the key at character 285", 400, 285],
    ["a 500 with the key at character 290", 500, 290],
  ])("%s shows no prefix of it after the cut", async (_title, status, at) => {
    for (const pod of cnf.pods) {
      pod.sim.failNext({
        kind: "garbage",
        status,
        method: "PUT",
        collection: REMOTES,
        body: `${"x".repeat(at - 4)}key=${psk} and more`,
        count: 6,
      });
    }
    await world.patchRuleSpec("IpsecSite", "site1", { remote: "203.0.113.8" });
    expect((await reconcile("IpsecSite", "site1")).kind).not.toBe("done");
    expect(leaked(await shown())).toEqual([]);
  });

  it("a 200 that is not JSON with the key at character 69 shows no prefix of it", async () => {
    for (const pod of cnf.pods) {
      pod.sim.failNext({
        kind: "garbage",
        method: "PUT",
        collection: REMOTES,
        body: `${"y".repeat(67)}k=${psk}`,
        count: 6,
      });
    }
    await world.patchRuleSpec("IpsecSite", "site1", { remote: "203.0.113.9" });
    expect((await reconcile("IpsecSite", "site1")).kind).not.toBe("done");
    expect(leaked(await shown())).toEqual([]);
  });
});

describe("a key too short to redact", () => {
  const core = adminKubeConfig().makeApiClient(CoreV1Api);

  it("given in the spec is refused at admission, naming the field, not the key", async () => {
    const harness = await startAdmissionHarness();
    try {
      const namespace = await harness.namespace();
      const api = rules(adminKubeConfig(), namespace);
      const labels = { sdewanPurpose: PURPOSE };
      expect((await api.create(rule("IpsecProposal", "prop1", labels, PROPOSAL))).ok).toBe(true);
      const spec = { ...siteSpec, pre_shared_key_secret_ref: undefined, pre_shared_key: "Zq7" };
      const refused = await api.create(rule("IpsecSite", "site1", labels, spec));
      expect(refused.ok).toBe(false);
      if (!refused.ok) {
        expect(refused.message).toContain("spec.pre_shared_key");
        expect(refused.message).toContain("at least 8 characters");
        expect(refused.message).not.toContain("Zq7");
      }
    } finally {
      await harness.close();
    }
  });

  it("read from a Secret Stalls the rule, and is in no text even when the CNF echoes it", async () => {
    const world = await SyncWorld.create();
    try {
      const cnf = await world.createCnf(PURPOSE, { pods: 1 });
      await core.createNamespacedSecret({
        namespace: world.namespace,
        body: { metadata: { name: "ipsec-keys" }, stringData: { psk: "k" } },
      });
      await world.createRule("IpsecProposal", "prop1", PURPOSE, PROPOSAL);
      await world.createRule("IpsecSite", "site1", PURPOSE, siteSpec);
      expect(await world.reconcile("IpsecProposal", "prop1")).toMatchObject({ kind: "done" });
      for (const pod of cnf.pods) {
        pod.sim.failNext({
          kind: "status",
          status: 400,
          message: "Field[k] checked failed",
          count: 5,
        });
      }
      const outcome = await world.reconcile("IpsecSite", "site1");
      const view = await world.ruleView("IpsecSite", "site1");
      expect(view).toMatchObject({
        inSync: false,
        condition: { type: "Stalled", reason: "SecretValueTooShort" },
      });
      expect(view?.message).toContain("shorter than 8 characters");
      expect(world.held(cnf, REMOTES)).toEqual([[]]);
      const events = await world.kube.list(EVENTS, { namespace: world.namespace });
      const shown = JSON.stringify([view?.status, events, world.log.lines, outcome]);
      expect(shown).not.toContain("[redacted]");
      expect(shown).not.toMatch(/"psk":"k"|= ?k\b/);
    } finally {
      await world.close();
    }
  });
});
