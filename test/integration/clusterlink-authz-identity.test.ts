// Issue 24 §2: clusterlink-authz decides from who asks, not from what the request says. A remote
// dataplane asks over HTTPS with its fabric certificate; the Peer is the one that certificate
// names, its labels are the ones its status holds (clusterlink-peer-health writes them), the
// Export must exist and be valid. Served by the runtime over real TLS, with the function's own
// role, against the real API server.
import { ATTRIBUTES } from "../../shared/clusterlink/index.js";
import { AuthzWorld } from "./clusterlink-authz-harness.js";

const world = new AuthzWorld();
const ohio = `ohio-${world.run}`;
const paris = `paris-${world.run}`;
const mallory = `mallory-${world.run}`;
const region = `${ATTRIBUTES.peerLabelPrefix}region`;
let euOnly: string;
let open: string;

const client = { [ATTRIBUTES.clientNamespace]: "app" };

beforeAll(async () => {
  await world.start();
  await world.peer(ohio, { region: "us" });
  await world.peer(paris, { region: "eu" });
  // A namespace whose Export only Peers in the EU may reach.
  euOnly = await world.namespace("cl-authz-eu");
  await world.validExport(euOnly, "db");
  await world.policy(euOnly, "eu-peers", {
    action: "allow",
    from: [{ workloadSelector: { matchLabels: { [region]: "eu" } } }],
    to: [{ workloadSelector: {} }],
  });
  // A namespace that lets every Peer in: only who asks and what exists can deny there.
  open = await world.namespace("cl-authz-open");
  await world.validExport(open, "db");
  await world.exportOf(open, "no-service", { port: 5432 });
  await world.exportEvent(open, "no-service");
  await world.policy(open, "everyone", {
    action: "allow",
    from: [{ workloadSelector: {} }],
    to: [{ workloadSelector: {} }],
  });
});

afterAll(() => world.stop());

describe("a Peer's labels come from its status, never from the request", () => {
  it("ohio claims labels.region eu in the request while its status says us: refused, not allowed", async () => {
    const reply = await world.ask(await world.certificateOf(ohio), {
      export: { name: "db", namespace: euOnly },
      source: { ...client, [region]: "eu" },
    });
    expect(reply.status).toBe(400);
    expect(reply.body["allowed"]).toBeUndefined();
    expect(reply.body["message"]).toContain(region);
  });

  it("ohio asking as itself is denied by the EU-only namespace: its status says us", async () => {
    const reply = await world.ask(await world.certificateOf(ohio), {
      export: { name: "db", namespace: euOnly },
      source: client,
    });
    expect(reply).toEqual({
      status: 200,
      body: {
        allowed: false,
        action: "deny",
        policy: "<default deny>",
        tier: "default",
        direction: "ingress",
        peer: ohio,
        export: `${euOnly}/db`,
      },
    });
  });

  it("paris, whose status says eu, is allowed by the EU policy, named", async () => {
    const reply = await world.ask(await world.certificateOf(paris), {
      export: { name: "db", namespace: euOnly },
      source: client,
    });
    expect(reply.body).toMatchObject({ allowed: true, policy: `${euOnly}/eu-peers`, peer: paris });
  });

  it("the Peer's status changing to eu changes the decision, with the same certificate", async () => {
    const late = `late-${world.run}`;
    await world.peer(late, { region: "us" });
    const cert = await world.certificateOf(late);
    const ask = () =>
      world.ask(cert, { export: { name: "db", namespace: euOnly }, source: client });
    expect((await ask()).body["allowed"]).toBe(false);
    await world.peerLabels(late, { region: "eu" });
    expect((await ask()).body["allowed"]).toBe(true);
  });
});

describe("who may ask at all", () => {
  it("mallory, with a fabric certificate but no Peer object, is denied even where everyone is allowed", async () => {
    const reply = await world.ask(await world.certificateOf(mallory), {
      export: { name: "db", namespace: open },
      source: client,
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      allowed: false,
      policy: "<unknown peer>",
      tier: "precondition",
      peer: mallory,
    });
    expect(reply.body["message"]).toContain(world.peerNamespace);
  });

  it("without a client certificate: 401 naming what is needed", async () => {
    const reply = await world.ask(undefined, { export: { name: "db", namespace: open } });
    expect(reply.status).toBe(401);
    expect(reply.body).toMatchObject({ error: "unauthenticated" });
    expect(reply.body["message"]).toContain("client certificate of the ClusterLink fabric");
  });

  it("with a certificate of another CA: 401 with the reason it did not verify", async () => {
    const reply = await world.ask(await world.stranger(), {
      export: { name: "db", namespace: open },
      peer: ohio,
    });
    expect(reply.status).toBe(401);
    expect(reply.body["message"]).toMatch(/the one presented: .+/);
  });

  it("a verified Peer may not name another Peer in the request", async () => {
    const reply = await world.ask(await world.certificateOf(ohio), {
      export: { name: "db", namespace: open },
      peer: paris,
    });
    expect(reply.status).toBe(400);
    expect(reply.body["message"]).toContain(`taken from the client certificate (${ohio})`);
  });
});

describe("the Export must exist and be valid", () => {
  it("an Export that does not exist is denied, though everyone is allowed", async () => {
    const reply = await world.ask(await world.certificateOf(ohio), {
      export: { name: "nothere", namespace: open },
      source: client,
    });
    expect(reply.body).toMatchObject({
      allowed: false,
      policy: "<export not found>",
      message: `no Export ${open}/nothere`,
    });
  });

  it("an Export whose Service is missing (ExportValid False) is denied, saying why", async () => {
    const reply = await world.ask(await world.certificateOf(ohio), {
      export: { name: "no-service", namespace: open },
      source: client,
    });
    expect(reply.body).toMatchObject({ allowed: false, policy: "<export not valid>" });
    expect(reply.body["message"]).toContain("does not exist");
  });

  it("the valid Export next to it is allowed, by the namespace's policy", async () => {
    const reply = await world.ask(await world.certificateOf(ohio), {
      export: { name: "db", namespace: open },
      source: client,
    });
    expect(reply.body).toMatchObject({ allowed: true, policy: `${open}/everyone` });
  });
});
