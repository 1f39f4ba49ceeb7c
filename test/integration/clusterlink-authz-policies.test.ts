// Issue 24 §2: with the webhook down (failurePolicy Ignore) an AccessPolicy with an invalid
// selector is stored; these tests create them with no webhook at all, as the integration API
// server runs. A deny that cannot be evaluated fails closed for what it could have matched, an
// allow that cannot be evaluated allows nothing, and each says so: PolicyValid on the policy and
// an Event, written by clusterlink-authz with its own role, once per change.
import { ATTRIBUTES } from "../../shared/clusterlink/index.js";
import { ACCESS_POLICIES, AuthzWorld } from "./clusterlink-authz-harness.js";

const world = new AuthzWorld();
const ohio = `ohio-${world.run}`;
const everyone = [{ workloadSelector: {} }];
const inWithoutValues = [
  { workloadSelector: { matchExpressions: [{ key: ATTRIBUTES.clientNamespace, operator: "In" }] } },
];
const badKey = [{ workloadSelector: { matchLabels: { "not a key!": "x" } } }];
const client = { [ATTRIBUTES.clientNamespace]: "app" };

beforeAll(async () => {
  await world.start();
  await world.peer(ohio, { region: "us" });
});

afterAll(() => world.stop());

const ask = async (namespace: string, name = "db") =>
  world.ask(await world.certificateOf(ohio), { export: { name, namespace }, source: client });

describe("a deny policy that cannot be evaluated fails closed and says so", () => {
  let ns: string;
  beforeAll(async () => {
    ns = await world.namespace("cl-authz-bad-deny");
    await world.validExport(ns, "db");
    await world.policy(ns, "everyone", { action: "allow", from: everyone, to: everyone });
    await world.policy(ns, "no-app", { action: "deny", from: inWithoutValues, to: everyone });
  });

  it("an allow-everyone policy does not win over a deny with `In` and no values: denied, by that deny", async () => {
    const reply = await ask(ns);
    expect(reply.body).toMatchObject({
      allowed: false,
      policy: `${ns}/no-app`,
      tier: "namespaced",
      failedClosed: true,
      unevaluable: [`${ns}/no-app`],
    });
    expect(reply.body["message"]).toContain("must be specified when operator is In");
  });

  it("the deny policy says so: PolicyValid False FailsClosed and one Warning Event", async () => {
    expect(await world.policyValid(ns, "no-app")).toEqual({
      status: "False",
      reason: "FailsClosed",
      message: expect.stringContaining(
        "denies every connection it could match until fixed: spec.from[0].workloadSelector.matchExpressions[0].values",
      ) as unknown,
    });
    const events = await world.eventsOf(ns, "AccessPolicy", "no-app");
    expect(events.map((e) => [e.type, e.reason])).toEqual([["Warning", "PolicyInvalid"]]);
    expect(await world.policyValid(ns, "everyone")).toBeUndefined();
  });

  it("asking again writes nothing more: no status write, no second Event", async () => {
    const key = { namespace: ns, name: "no-app" };
    const before = await world.kube.get(ACCESS_POLICIES, key);
    for (let i = 0; i < 3; i += 1) expect((await ask(ns)).body["allowed"]).toBe(false);
    const after = await world.kube.get(ACCESS_POLICIES, key);
    expect(after?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
    expect(await world.eventsOf(ns, "AccessPolicy", "no-app")).toHaveLength(1);
  });

  it("fixed, it is evaluated again: allowed, PolicyValid True and a Normal Event", async () => {
    const fixed = [
      {
        workloadSelector: {
          matchExpressions: [
            { key: ATTRIBUTES.clientNamespace, operator: "In", values: ["regulated"] },
          ],
        },
      },
    ];
    await world.kube.mergePatch(
      ACCESS_POLICIES,
      { namespace: ns, name: "no-app" },
      {
        spec: { from: fixed },
      },
    );
    expect((await ask(ns)).body).toMatchObject({ allowed: true, policy: `${ns}/everyone` });
    expect(await world.policyValid(ns, "no-app")).toEqual({
      status: "True",
      reason: "Valid",
      message: "",
    });
    const reasons = (await world.eventsOf(ns, "AccessPolicy", "no-app")).map((e) => e.reason);
    expect(reasons.sort()).toEqual(["PolicyInvalid", "PolicyValid"]);
  });
});

describe("a deny policy with a bad label key fails closed only for what it could match", () => {
  let ns: string;
  beforeAll(async () => {
    ns = await world.namespace("cl-authz-bad-key");
    await world.validExport(ns, "db");
    await world.validExport(ns, "web");
    await world.policy(ns, "everyone", { action: "allow", from: everyone, to: everyone });
    await world.policy(ns, "no-db", {
      action: "deny",
      from: badKey,
      to: [{ workloadSelector: { matchLabels: { [ATTRIBUTES.exportName]: "db" } } }],
    });
  });

  it("the Export it names is denied, the other one is not", async () => {
    expect((await ask(ns, "db")).body).toMatchObject({ allowed: false, policy: `${ns}/no-db` });
    expect((await ask(ns, "web")).body).toMatchObject({ allowed: true, policy: `${ns}/everyone` });
    expect(await world.policyValid(ns, "no-db")).toMatchObject({
      status: "False",
      reason: "FailsClosed",
    });
  });
});

describe("a PrivilegedAccessPolicy deny that cannot be evaluated", () => {
  let ns: string;
  const name = `no-secret-${world.run}`;
  beforeAll(async () => {
    ns = await world.namespace("cl-authz-privileged");
    await world.validExport(ns, "secret");
    await world.validExport(ns, "db");
    await world.policy(ns, "everyone", { action: "allow", from: everyone, to: everyone });
    // Cluster-wide: its `to` names this file's namespace, so no other test is affected.
    await world.policy(undefined, name, {
      action: "deny",
      from: [{ workloadSets: ["untrusted"] }],
      to: [
        {
          workloadSelector: {
            matchLabels: { [ATTRIBUTES.exportNamespace]: ns, [ATTRIBUTES.exportName]: "secret" },
          },
        },
      ],
    });
  });

  it("denies in the privileged tier what it could match, and says so on the cluster-scoped policy", async () => {
    expect((await ask(ns, "secret")).body).toMatchObject({
      allowed: false,
      policy: name,
      tier: "privileged",
      failedClosed: true,
    });
    expect((await ask(ns, "db")).body).toMatchObject({ allowed: true });
    expect(await world.policyValid(undefined, name)).toMatchObject({
      status: "False",
      reason: "FailsClosed",
      message: expect.stringContaining("workloadSets: not supported") as unknown,
    });
    const events = await world.eventsOf("default", "PrivilegedAccessPolicy", name);
    expect(events.map((e) => e.reason)).toEqual(["PolicyInvalid"]);
  });
});

describe("an allow policy that cannot be evaluated allows nothing, and says so", () => {
  let ns: string;
  beforeAll(async () => {
    ns = await world.namespace("cl-authz-bad-allow");
    await world.validExport(ns, "db");
    await world.policy(ns, "app-in", { action: "allow", from: inWithoutValues, to: everyone });
  });

  it("default deny, the policy named as unevaluable, PolicyValid False AllowsNothing", async () => {
    expect((await ask(ns)).body).toMatchObject({
      allowed: false,
      policy: "<default deny>",
      unevaluable: [`${ns}/app-in`],
    });
    expect(await world.policyValid(ns, "app-in")).toMatchObject({
      status: "False",
      reason: "AllowsNothing",
    });
    const events = await world.eventsOf(ns, "AccessPolicy", "app-in");
    expect(events.map((e) => [e.type, e.reason])).toEqual([["Warning", "PolicyInvalid"]]);
  });
});
