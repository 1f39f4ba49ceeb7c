// Events without memory, against the real API server: each event only names what to look at, and
// the groups follow live state through relabels, deletions, Namespace changes, Egress edits, bad
// input and duplicated or reordered deliveries, writing nothing when nothing changed.
//
// Other egress test files send resync events that recompute every group in the cluster, so where
// a concurrent resync may do the write first, tests assert the end state, not "updated".
import request from "supertest";
import { createFunctionApp, createLogger, Runtime } from "../../shared/runtime/index.js";
import type { Outcome } from "../../shared/core/outcome.js";
import { EgressWorld, RUN_LABEL } from "./egress-harness.js";

const world = new EgressWorld();
const run = { [RUN_LABEL]: world.run };
const webSelector = { podSelector: { matchLabels: { ...run, app: "web" } } };
const dbSelector = { podSelector: { matchLabels: { ...run, app: "db" } } };

async function resourceVersion(name: string): Promise<string | undefined> {
  return (await world.group(name))?.metadata.resourceVersion;
}

describe("a Pod moves between groups as its labels and state change", () => {
  let ns = "";
  const [web, db] = [world.name("web"), world.name("db")];

  beforeAll(async () => {
    ns = await world.namespace("pods");
    await world.pod(ns, "p1", { app: "web" });
    await world.pod(ns, "p2", { app: "web" });
    await world.egress(web, webSelector);
    await world.egress(db, dbSelector);
    await world.egressEvent(web, "add");
    await world.egressEvent(db, "add");
  }, 30_000);

  it("starts with both web Pods in the web group and an empty db group", async () => {
    expect(await world.members(web)).toEqual([`${ns}/p1`, `${ns}/p2`]);
    expect(await world.members(db)).toEqual([]);
  });

  it("relabelled web -> db: one Pod event moves it out of web and into db", async () => {
    await world.relabelPod(ns, "p1", { app: "db" });
    expect(await world.podEvent(ns, "p1")).toMatchObject({
      kind: "done",
      result: expect.stringMatching(/^2 EgressGroups recomputed: /) as unknown,
    });
    expect(await world.members(web)).toEqual([`${ns}/p2`]);
    expect(await world.members(db)).toEqual([`${ns}/p1`]);
  });

  it("a new IP: the member's ips follow status.podIPs", async () => {
    await world.setPodStatus(ns, "p2", "Running", ["100.64.9.2", "fd00::92"]);
    await world.podEvent(ns, "p2");
    expect((await world.group(web))?.status?.members[0]?.ips).toEqual(["100.64.9.2", "fd00::92"]);
  });

  it("terminated (Succeeded): the Pod leaves the group though its labels still match", async () => {
    await world.setPodStatus(ns, "p2", "Succeeded", ["100.64.9.2"]);
    await world.podEvent(ns, "p2");
    expect(await world.members(web)).toEqual([]);
  });

  it("deleted: the Pod leaves every group on its delete event", async () => {
    await world.deletePod(ns, "p1");
    expect(await world.podEvent(ns, "p1", "delete")).toMatchObject({ kind: "done" });
    expect(await world.members(db)).toEqual([]);
  });

  it("an event for a Pod no Egress selects or lists writes nothing and says so", async () => {
    await world.pod(ns, "other", { app: "other" });
    expect(await world.podEvent(ns, "other", "add")).toEqual({
      kind: "done",
      result: `unchanged: no Egress selects or lists pod ${ns}/other`,
    });
  });
});

describe("a Namespace relabel moves its Pods between namespace-selected groups", () => {
  it("env=prod -> env=dev: the Namespace event moves the Pods from the prod group to the dev group", async () => {
    const ns = await world.namespace("team", { env: "prod" });
    await world.pod(ns, "a", { app: "web" });
    await world.pod(ns, "b", { app: "db" });
    const [prodGroup, devGroup] = [world.name("env-prod"), world.name("env-dev")];
    await world.egress(prodGroup, { namespaceSelector: { matchLabels: { ...run, env: "prod" } } });
    await world.egress(devGroup, { namespaceSelector: { matchLabels: { ...run, env: "dev" } } });
    await world.resync();
    expect(await world.members(prodGroup)).toEqual([`${ns}/a`, `${ns}/b`]);

    await world.relabelNamespace(ns, { env: "dev" });
    await world.namespaceEvent(ns);
    expect(await world.members(prodGroup)).toEqual([]);
    expect(await world.members(devGroup)).toEqual([`${ns}/a`, `${ns}/b`]);
  });
});

describe("Egress edits and deletion", () => {
  it("a changed selector recomputes the group and records the new generation", async () => {
    const ns = await world.namespace("edit");
    await world.pod(ns, "w", { app: "edit-w" });
    await world.pod(ns, "d", { app: "edit-d" });
    const name = world.name("edited");
    await world.egress(name, { podSelector: { matchLabels: { ...run, app: "edit-w" } } });
    await world.egressEvent(name, "add");
    expect(await world.members(name)).toEqual([`${ns}/w`]);

    await world.updateEgress(name, { podSelector: { matchLabels: { ...run, app: "edit-d" } } });
    expect(await world.egressEvent(name)).toMatchObject({ kind: "done" });
    expect((await world.group(name))?.status).toMatchObject({
      observedEgressGeneration: 2,
      members: [{ pod: { namespace: ns, name: "d" } }],
    });
  });

  it("a deleted Egress takes its group with it", async () => {
    const name = world.name("deleted");
    await world.egress(name, webSelector);
    await world.egressEvent(name, "add");
    expect(await world.group(name)).toBeDefined();

    await world.deleteEgress(name);
    expect(await world.egressEvent(name, "delete")).toMatchObject({ kind: "done" });
    expect(await world.group(name)).toBeUndefined();
    // The delete event redelivered: nothing left to do.
    expect(await world.egressEvent(name, "delete")).toMatchObject({ kind: "done" });
  });

  it("a resync deletes a group whose Egress is gone (its delete event was lost)", async () => {
    const name = world.name("orphan");
    await world.egress(name, webSelector);
    await world.egressEvent(name, "add");
    await world.deleteEgress(name);
    await world.resync();
    expect(await world.group(name)).toBeUndefined();
  });
});

describe("no write when nothing changed; duplicates and reordering converge", () => {
  it("recomputing an unchanged group (Egress, Pod and resync events) keeps its resourceVersion", async () => {
    const ns = await world.namespace("steady");
    await world.pod(ns, "s", { app: "steady" });
    const name = world.name("steady");
    await world.egress(name, { podSelector: { matchLabels: { ...run, app: "steady" } } });
    await world.egressEvent(name, "add");
    const before = await resourceVersion(name);

    expect(await world.egressEvent(name)).toEqual({
      kind: "done",
      result: `EgressGroup ${name} unchanged (1 members)`,
    });
    await world.podEvent(ns, "s");
    await world.resync();
    expect(await resourceVersion(name)).toBe(before);
  });

  it("duplicated and shuffled events give the same groups as one fresh recompute", async () => {
    const ns = await world.namespace("shuffle", { env: "a" });
    const [byLabel, byNamespace] = [world.name("shuffle-label"), world.name("shuffle-ns")];
    await world.egress(byLabel, { podSelector: { matchLabels: { ...run, app: "x" } } });
    await world.egress(byNamespace, { namespaceSelector: { matchLabels: { ...run, env: "b" } } });
    for (const pod of ["x1", "x2", "x3"]) await world.pod(ns, pod, { app: "x" });
    // The changes, whose events arrive late, twice, and out of order.
    await world.relabelPod(ns, "x1", { app: "y" });
    await world.deletePod(ns, "x2");
    await world.relabelNamespace(ns, { env: "b" });
    const events: Array<() => Promise<Outcome>> = [
      () => world.podEvent(ns, "x2", "delete"),
      () => world.namespaceEvent(ns),
      () => world.podEvent(ns, "x1"),
      () => world.egressEvent(byNamespace, "add"),
      () => world.podEvent(ns, "x3", "add"),
      () => world.egressEvent(byLabel, "add"),
    ];
    for (const send of [...events].reverse()) await send();
    await Promise.all(events.map((send) => send()));

    const afterEvents = [await world.members(byLabel), await world.members(byNamespace)];
    expect(afterEvents).toEqual([[`${ns}/x3`], [`${ns}/x1`, `${ns}/x3`]]);
    const versions = [await resourceVersion(byLabel), await resourceVersion(byNamespace)];
    await world.resync();
    expect([await resourceVersion(byLabel), await resourceVersion(byNamespace)]).toEqual(versions);
  });
});

describe("bad input", () => {
  it("an Egress with In and no values: 422 InvalidSelector, a Stalled group, and Ready again once fixed", async () => {
    const name = world.name("invalid");
    await world.egress(name, {
      podSelector: { matchExpressions: [{ key: "app", operator: "In", values: [] }] },
    });
    expect(await world.egressEvent(name, "add")).toEqual({
      kind: "permanent",
      code: "InvalidSelector",
      reason: `EgressGroup ${name}: spec.appliedTo.podSelector.matchExpressions[0].values: must be specified when operator is In`,
    });
    const stalled = await world.group(name);
    expect(stalled?.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ["Ready", "False", "InvalidSelector"],
      ["Stalled", "True", "InvalidSelector"],
    ]);
    expect(stalled?.status?.memberCount).toBe(0);

    await world.updateEgress(name, { podSelector: { matchLabels: { ...run, app: "none" } } });
    expect(await world.egressEvent(name)).toMatchObject({ kind: "done" });
    expect((await world.group(name))?.status?.conditions?.map((c) => c.type)).toEqual(["Ready"]);
  });

  it.each([
    [
      "apps/v1 Deployment",
      { apiVersion: "apps/v1", kind: "Deployment", namespace: "a", name: "d" },
      "UnknownKind",
    ],
    [
      "a rule kind",
      {
        apiVersion: "batch.sdewan.akraino.org/v1alpha1",
        kind: "Mwan3Rule",
        namespace: "a",
        name: "r",
      },
      "UnknownKind",
    ],
    [
      "a Pod without namespace",
      { apiVersion: "v1", kind: "Pod", namespace: "", name: "p" },
      "MissingName",
    ],
  ])("an event for %s is malformed (400), and nothing is read", async (_title, ref, code) => {
    world.calls.api = 0;
    expect(await world.send({ type: "object", id: "x", action: "update", ref })).toMatchObject({
      kind: "malformed",
      code,
    });
    expect(world.calls.api).toBe(0);
  });

  it("above the size budget: TooManyMembers on the group, members kept, never truncated", async () => {
    const small = new EgressWorld({ limits: { maxMembers: 2, maxMemberBytes: 1_000_000 } });
    const ns = await small.namespace("big");
    const name = small.name("big");
    await small.pod(ns, "a", { app: "big" });
    await small.pod(ns, "b", { app: "big" });
    await small.egress(name, { podSelector: { matchLabels: small.labels({ app: "big" }) } });
    await small.egressEvent(name, "add");
    await small.pod(ns, "c", { app: "big" });
    await small.podEvent(ns, "c", "add");
    const group = await small.group(name);
    expect(group?.status?.members.map((m) => m.pod.name)).toEqual(["a", "b"]);
    expect(group?.status?.conditions?.find((c) => c.type === "Stalled")).toMatchObject({
      status: "True",
      reason: "TooManyMembers",
      message: expect.stringContaining(
        "the Egress selects 3 Pods; an EgressGroup holds at most 2 members",
      ) as unknown,
    });
    expect(await small.egressEvent(name)).toMatchObject({
      kind: "permanent",
      code: "TooManyMembers",
    });
  });
});

describe("over HTTP, as Knative or the connector delivers", () => {
  const runtime = new Runtime({ logger: createLogger({ level: "silent" }) });
  const app = createFunctionApp(world.fn, runtime);
  const binary = (type: string, ref: Record<string, string>) =>
    request(app)
      .post("/")
      .set({
        "content-type": "application/json",
        "ce-specversion": "1.0",
        "ce-id": "h1",
        "ce-source": "test",
        "ce-type": type,
      })
      .send(JSON.stringify(ref));

  it("binary mode Egress add -> 202 with an empty body, the group written", async () => {
    const name = world.name("http-binary");
    await world.egress(name, webSelector);
    const res = await binary("dev.knative.apiserver.ref.add", {
      apiVersion: "crd.antrea.io/v1beta1",
      kind: "Egress",
      name,
      namespace: "",
    });
    expect([res.status, res.text]).toEqual([202, ""]);
    expect(await world.group(name)).toBeDefined();
  });

  it("structured mode Pod update -> 202", async () => {
    const ns = await world.namespace("http");
    await world.pod(ns, "h", { app: "web" });
    const res = await request(app)
      .post("/")
      .set("content-type", "application/cloudevents+json; charset=utf-8")
      .send(
        JSON.stringify({
          specversion: "1.0",
          id: "h2",
          source: "test",
          type: "dev.knative.apiserver.ref.update",
          datacontenttype: "application/json",
          data: { apiVersion: "v1", kind: "Pod", namespace: ns, name: "h" },
        }),
      );
    expect(res.status).toBe(202);
    expect(await world.members(world.name("http-binary"))).toContain(`${ns}/h`);
  });

  it("an unknown kind -> 400; an invalid selector -> 422", async () => {
    const unknown = await binary("dev.knative.apiserver.ref.update", {
      apiVersion: "apps/v1",
      kind: "Deployment",
      namespace: "a",
      name: "d",
    });
    expect(unknown.status).toBe(400);
    const name = world.name("http-invalid");
    await world.egress(name, {
      podSelector: { matchExpressions: [{ key: "app", operator: "NotIn", values: [] }] },
    });
    const invalid = await binary("dev.knative.apiserver.ref.add", {
      apiVersion: "crd.antrea.io/v1beta1",
      kind: "Egress",
      name,
      namespace: "",
    });
    expect(invalid.status).toBe(422);
    expect(invalid.headers["x-sdewan-code"]).toBe("InvalidSelector");
  });

  it("an API server that cannot be reached -> 503 with Retry-After", async () => {
    const { createKubeClient } = await import("../../shared/kube/index.js");
    const { KubeConfig } = await import("@kubernetes/client-node");
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "gone", server: "https://127.0.0.1:1", skipTLSVerify: true }],
      users: [{ name: "u", token: "t" }],
      contexts: [{ name: "c", cluster: "gone", user: "u" }],
      currentContext: "c",
    });
    const { createEgressGroupSync } = await import("../../functions/egress-group-sync/index.js");
    const unreachable = createFunctionApp(
      createEgressGroupSync({ kube: () => createKubeClient(kc) }),
      runtime,
    );
    const res = await request(unreachable)
      .post("/")
      .set({
        "content-type": "application/json",
        "ce-specversion": "1.0",
        "ce-id": "h3",
        "ce-source": "test",
        "ce-type": "dev.knative.apiserver.ref.update",
      })
      .send(
        JSON.stringify({
          apiVersion: "crd.antrea.io/v1beta1",
          kind: "Egress",
          name: "x",
          namespace: "",
        }),
      );
    expect(res.status).toBe(503);
    expect(res.headers["retry-after"]).toBeDefined();
  });
});
