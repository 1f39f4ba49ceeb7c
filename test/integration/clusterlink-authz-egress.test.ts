// Issue 24 §2: the importing side is decided too (upstream's egress authorization). The local
// dataplane names the client by its IP; the client's namespace, service account and labels come
// from its Pod, and each source of the Import (a remote Peer, with the labels its status holds,
// and the Export there) is checked against the Import namespace's policies.
import { randomBytes } from "node:crypto";
import { ATTRIBUTES } from "../../shared/clusterlink/index.js";
import { PODS } from "../../shared/kube/index.js";
import { AuthzWorld } from "./clusterlink-authz-harness.js";

const world = new AuthzWorld();
const ohio = `ohio-${world.run}`;
const paris = `paris-${world.run}`;
// Pod IPs are data here (no Pod runs); unique to this run, so a cluster-wide lookup finds ours.
const [a, b] = randomBytes(2);
const ip = (host: number): string => `127.${a ?? 0}.${b ?? 0}.${host}`;
let ns: string;
let dataplane: Awaited<ReturnType<AuthzWorld["certificateOf"]>>;

const source = (peer: string) => ({ peer, exportName: "db", exportNamespace: "data" });

async function pod(name: string, labels: Record<string, string>, podIP: string): Promise<void> {
  await world.kube.create(PODS, {
    metadata: { name, namespace: ns, labels },
    spec: {
      serviceAccountName: "reader",
      containers: [{ name: "app", image: "example.invalid/app:1" }],
    },
  });
  await world.kube.patchStatus(
    PODS,
    { namespace: ns, name },
    { phase: "Running", podIP, podIPs: [{ ip: podIP }] },
  );
}

beforeAll(async () => {
  await world.start();
  dataplane = await world.certificateOf(`dataplane-${world.run}`);
  await world.peer(ohio, { region: "us" });
  await world.peer(paris, { region: "eu" });
  ns = await world.namespace("cl-authz-egress");
  await world.importOf(ns, "db", { port: 5432, sources: [source(ohio), source(paris)] });
  await pod("web", { app: "web" }, ip(1));
  await pod("batch", { app: "batch" }, ip(2));
  // The web tier may reach the Import's sources in the EU, as the reader service account.
  await world.policy(ns, "web-to-eu", {
    action: "allow",
    from: [
      {
        workloadSelector: {
          matchLabels: {
            [`${ATTRIBUTES.clientLabelPrefix}app`]: "web",
            [ATTRIBUTES.clientServiceAccount]: "reader",
          },
        },
      },
    ],
    to: [{ workloadSelector: { matchLabels: { [`${ATTRIBUTES.peerLabelPrefix}region`]: "eu" } } }],
  });
});

afterAll(() => world.stop());

const ask = (body: Record<string, unknown>) =>
  world.ask(dataplane, { import: { name: "db", namespace: ns }, ...body });

describe("egress: the local client, by its Pod, towards the source the dataplane chose", () => {
  it("web towards paris (status: eu): allowed, by the Import namespace's policy", async () => {
    const reply = await ask({ client: { ip: ip(1) }, target: source(paris) });
    expect(reply).toEqual({
      status: 200,
      body: {
        allowed: true,
        action: "allow",
        policy: `${ns}/web-to-eu`,
        tier: "namespaced",
        direction: "egress",
        import: `${ns}/db`,
        client: `${ns}/web`,
        target: source(paris),
      },
    });
  });

  it("web towards ohio (status: us): denied", async () => {
    const reply = await ask({ client: { ip: ip(1) }, target: source(ohio) });
    expect(reply.body).toMatchObject({ allowed: false, policy: "<default deny>" });
  });

  it("no source chosen: each is decided, in the Import's order, and the allowed one picked", async () => {
    const reply = await ask({ client: { ip: ip(1) } });
    expect(reply.body).toMatchObject({ allowed: true, target: source(paris) });
    expect(reply.body["sources"]).toEqual([
      expect.objectContaining({ peer: ohio, allowed: false, policy: "<default deny>" }),
      expect.objectContaining({ peer: paris, allowed: true, policy: `${ns}/web-to-eu` }),
    ]);
  });

  it("the batch Pod is not the web tier: denied", async () => {
    const reply = await ask({ client: { ip: ip(2) }, target: source(paris) });
    expect(reply.body).toMatchObject({ allowed: false, client: `${ns}/batch` });
  });

  it("a request that states the client's attributes is refused: they are its Pod's", async () => {
    const reply = await ask({
      client: { ip: ip(2), labels: { app: "web" } },
      target: source(paris),
    });
    expect(reply.status).toBe(400);
    expect(reply.body["message"]).toContain("client");
  });

  it.each([
    ["an IP no Pod has", { client: { ip: ip(99) } }, "<unknown client>"],
    [
      "a target that is not a source of the Import",
      { client: { ip: ip(1) }, target: { ...source(paris), exportName: "other" } },
      "<not a source>",
    ],
  ])("%s: denied before any policy", async (_title, body, policy) => {
    expect((await ask(body)).body).toMatchObject({ allowed: false, policy, tier: "precondition" });
  });

  it("an Import that does not exist: denied", async () => {
    const reply = await world.ask(dataplane, {
      import: { name: "nothere", namespace: ns },
      client: { ip: ip(1) },
    });
    expect(reply.body).toMatchObject({ allowed: false, policy: "<import not found>" });
  });

  it("without a client certificate: 401", async () => {
    const reply = await world.ask(undefined, {
      import: { name: "db", namespace: ns },
      client: { ip: ip(1) },
    });
    expect(reply.status).toBe(401);
  });
});
