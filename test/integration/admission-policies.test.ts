// validate-admission called by a real kube-apiserver over TLS: one CNF per purpose, immutable
// sdewanPurpose, rule dependencies on create and update (a delete is held by the finalizer
// instead: admission-deletes.test.ts, ADR 0010), CNF networks, and the CNF's own spec rules.
// No CNF runs anywhere in this file: every answer comes without calling one.
import { CoreV1Api } from "@kubernetes/client-node";
import { clusterLinkResource, createKubeClient } from "../../shared/kube/index.js";
import { adminKubeConfig } from "./support/cluster.js";
import { startAdmissionHarness, type AdmissionHarness } from "./admission-harness.js";
import { cnfDeployment, deniedBy, deployments, rule, rules } from "./admission-clients.js";

const purpose = { sdewanPurpose: "cnf-a" };
const policySpec = { members: [{ network: "ovn-provider-net1", metric: 1, weight: 2 }] };
const ruleSpec = { policy: "balance1", proto: "tcp", dest_port: "80" };
const zoneSpec = (network = "ovn-priv-net") => ({ network: [network], input: "ACCEPT" });
const proposalSpec = {
  encryption_algorithm: "aes128",
  hash_algorithm: "sha256",
  dh_group: "modp2048",
};
const hostSpec = {
  remote: "10.10.10.1",
  authentication_method: "psk",
  pre_shared_key: "test-only-key",
  crypto_proposal: ["ike1"],
  connections: [{ name: "conn1", conn_type: "tunnel", mode: "start", crypto_proposal: ["esp1"] }],
};

let harness: AdmissionHarness;
const admin = adminKubeConfig();

beforeAll(async () => {
  harness = await startAdmissionHarness();
}, 60_000);

afterAll(async () => {
  await harness?.close();
});

describe("CNF Deployments", () => {
  it("admits the first CNF for a purpose and denies a second one in the same namespace", async () => {
    const ns = await harness.namespace();
    const apps = deployments(admin, ns);
    expect((await apps.create(cnfDeployment("cnf-1", "cnf-a"))).ok).toBe(true);
    const message = deniedBy(
      await apps.create(cnfDeployment("cnf-2", "cnf-a")),
      "one-cnf-per-purpose",
    );
    expect(message).toContain('Deployment "cnf-1" already has it');
    expect((await apps.create(cnfDeployment("cnf-3", "cnf-b"))).ok).toBe(true);
  });

  it("allows the same purpose in another namespace (the CNF is found per namespace)", async () => {
    const [ns1, ns2] = [await harness.namespace(), await harness.namespace()];
    expect((await deployments(admin, ns1).create(cnfDeployment("cnf-1", "cnf-a"))).ok).toBe(true);
    expect((await deployments(admin, ns2).create(cnfDeployment("cnf-1", "cnf-a"))).ok).toBe(true);
  });

  it("denies changing a CNF's sdewanPurpose label but allows other label changes", async () => {
    const ns = await harness.namespace();
    const apps = deployments(admin, ns);
    await apps.create(cnfDeployment("cnf-1", "cnf-a"));
    const message = deniedBy(
      await apps.patch("cnf-1", { metadata: { labels: { sdewanPurpose: "cnf-b" } } }),
      "immutable-purpose",
    );
    expect(message).toContain('was "cnf-a", the update makes it "cnf-b"');
    expect((await apps.patch("cnf-1", { metadata: { labels: { team: "edge" } } })).ok).toBe(true);
  });
});

describe("rule dependencies", () => {
  it("denies an Mwan3Rule until its Mwan3Policy exists with the same purpose", async () => {
    const api = rules(admin, await harness.namespace());
    const denied = deniedBy(
      await api.create(rule("Mwan3Rule", "r1", purpose, ruleSpec)),
      "rule-dependencies",
    );
    expect(denied).toContain('Mwan3Policy "balance1" (spec.policy) does not exist');
    expect(
      (await api.create(rule("Mwan3Policy", "balance1", { sdewanPurpose: "cnf-b" }, policySpec)))
        .ok,
    ).toBe(true);
    const wrongPurpose = deniedBy(
      await api.create(rule("Mwan3Rule", "r1", purpose, ruleSpec)),
      "rule-dependencies",
    );
    expect(wrongPurpose).toContain('has sdewanPurpose="cnf-b", not "cnf-a"');
    expect((await api.create(rule("Mwan3Policy", "balance2", purpose, policySpec))).ok).toBe(true);
    expect(
      (await api.create(rule("Mwan3Rule", "r2", purpose, { ...ruleSpec, policy: "balance2" }))).ok,
    ).toBe(true);
  });

  it("checks references on UPDATE when the spec changes", async () => {
    const api = rules(admin, await harness.namespace());
    await api.create(rule("Mwan3Policy", "balance1", purpose, policySpec));
    await api.create(rule("Mwan3Rule", "r1", purpose, ruleSpec));
    const message = deniedBy(
      await api.patch("Mwan3Rule", "r1", { spec: { policy: "nope" } }),
      "rule-dependencies",
    );
    expect(message).toContain('Mwan3Policy "nope"');
  });

  it("lets a rule that is being deleted release its dependency and drop its finalizer", async () => {
    const api = rules(admin, await harness.namespace());
    await api.create(rule("Mwan3Policy", "balance1", purpose, policySpec));
    const held = rule("Mwan3Rule", "r1", purpose, ruleSpec);
    held.metadata.finalizers = ["test.sdewan.akraino.org/hold"];
    await api.create(held);
    expect((await api.delete("Mwan3Rule", "r1")).ok).toBe(true); // now terminating
    expect((await api.delete("Mwan3Policy", "balance1")).ok).toBe(true);
    // The controller's finalizer removal is a metadata-only UPDATE: never blocked by the gone policy.
    expect((await api.patch("Mwan3Rule", "r1", { metadata: { finalizers: null } })).ok).toBe(true);
  });
});

describe("sdewanPurpose of rules", () => {
  it("cannot change on UPDATE, and the message says to recreate the rule", async () => {
    const api = rules(admin, await harness.namespace());
    await api.create(rule("IpsecProposal", "prop1", purpose, proposalSpec));
    const message = deniedBy(
      await api.patch("IpsecProposal", "prop1", {
        metadata: { labels: { sdewanPurpose: "cnf-b" } },
      }),
      "immutable-purpose",
    );
    expect(message).toContain("delete it and create it again");
  });
});

describe("CNF networks", () => {
  it("denies networks the CNF does not attach, once the CNF exists", async () => {
    const ns = await harness.namespace();
    const api = rules(admin, ns);
    const beforeCnf = await api.create(
      rule("FirewallZone", "early", purpose, zoneSpec("ovn-nope")),
    );
    expect(beforeCnf.ok).toBe(true); // rules may come before their CNF
    await deployments(admin, ns).create(cnfDeployment("cnf-1", "cnf-a"));
    const message = deniedBy(
      await api.create(rule("FirewallZone", "late", purpose, zoneSpec("ovn-nope"))),
      "cnf-networks",
    );
    expect(message).toContain('"ovn-nope" (spec.network[0])');
    expect(message).toContain('attached: "ovn-priv-net", "ovn-provider-net1"');
    const policy = rule("Mwan3Policy", "balance1", purpose, {
      members: [{ network: "ovn-x", metric: 1, weight: 1 }],
    });
    expect(deniedBy(await api.create(policy), "cnf-networks")).toContain("spec.members[0].network");
    expect((await api.create(rule("FirewallZone", "lan", purpose, zoneSpec()))).ok).toBe(true);
  });
});

describe("the CNF's own spec rules, at kubectl apply time", () => {
  it.each([
    [
      "a zone name longer than 11 characters",
      rule("FirewallZone", "averylongzone", purpose, zoneSpec()),
      "metadata.name",
    ],
    [
      "psk authentication without pre_shared_key",
      rule("IpsecHost", "host1", purpose, { ...hostSpec, pre_shared_key: undefined }),
      "spec.pre_shared_key",
    ],
    [
      "a pre-shared key given both in plain and as a Secret reference",
      rule("IpsecHost", "host1", purpose, {
        ...hostSpec,
        pre_shared_key_secret_ref: { name: "ipsec-keys", key: "psk" },
      }),
      "spec.pre_shared_key_secret_ref: give pre_shared_key or pre_shared_key_secret_ref, not both",
    ],
  ])("denies %s (rules a CRD schema cannot express)", async (_title, object, field) => {
    const api = rules(admin, await harness.namespace());
    expect(deniedBy(await api.create(object), "rule-spec")).toContain(field);
  });

  it("refuses an Mwan3Rule port range, naming the field", async () => {
    const api = rules(admin, await harness.namespace());
    const result = await api.create(
      rule("Mwan3Rule", "r1", purpose, { ...ruleSpec, dest_port: "80-90" }),
    );
    // The CRD's structural schema may refuse before the webhook; either way the field is named.
    expect(result.ok ? "(allowed)" : result.message).toContain("dest_port");
  });
});

describe("with every CNF down", () => {
  it("still answers: a review that is not a dry run never calls a CNF", async () => {
    const ns = await harness.namespace();
    await deployments(admin, ns).create(cnfDeployment("cnf-1", "cnf-a"));
    // A Ready CNF pod at a loopback address where nothing listens.
    const core = admin.makeApiClient(CoreV1Api);
    const pod = await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: "cnf-1-pod", labels: { app: "cnf-1", sdewanPurpose: "cnf-a" } },
        spec: { containers: [{ name: "cnf", image: "integratedcloudnative/openwrt:dev" }] },
      },
    });
    await core.replaceNamespacedPodStatus({
      namespace: ns,
      name: "cnf-1-pod",
      body: {
        ...pod,
        status: {
          phase: "Running",
          podIP: "127.0.0.254",
          conditions: [{ type: "Ready", status: "True" }],
        },
      },
    });
    const api = rules(admin, ns);
    const started = performance.now();
    expect((await api.create(rule("FirewallZone", "lan", purpose, zoneSpec()))).ok).toBe(true);
    expect(
      (await api.create(rule("FirewallZone", "wan", purpose, zoneSpec("ovn-provider-net1")))).ok,
    ).toBe(true);
    const fwd = rule("FirewallForwarding", "lan2wan", purpose, { src: "lan", dest: "wan" });
    expect((await api.create(fwd)).ok).toBe(true);
    deniedBy(
      await api.create(rule("FirewallZone", "dmz", purpose, zoneSpec("ovn-nope"))),
      "cnf-networks",
    );
    // Far below the 5 s webhook timeout a CNF call could have eaten.
    expect(performance.now() - started).toBeLessThan(4_000);
  });
});

describe("ClusterLink kinds (policy clusterlink-spec), through the API server", () => {
  it("denies a Peer without gateways and an Import without sources, saying what to fix; admits good ones", async () => {
    const ns = await harness.namespace();
    const kube = createKubeClient(admin);
    const refused = async (kind: "Peer" | "Import", spec: unknown): Promise<string> => {
      try {
        await kube.create(clusterLinkResource(kind), {
          metadata: { name: "bad", namespace: ns },
          spec,
        });
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error(`expected the ${kind} to be denied`);
    };
    const peer = await refused("Peer", { gateways: [] });
    expect(peer).toContain('sdewan policy "clusterlink-spec" denied this request');
    expect(peer).toMatch(/spec\.gateways is empty.*To fix: /);
    const imp = await refused("Import", { port: 5432, sources: [] });
    expect(imp).toMatch(/spec\.sources is empty/);
    const source = { peer: "east", exportName: "db", exportNamespace: "data" };
    await kube.create(clusterLinkResource("Import"), {
      metadata: { name: "good", namespace: ns },
      spec: { port: 5432, sources: [source] },
    });
  });
});
