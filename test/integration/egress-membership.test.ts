// Who is in an Egress's group, against the real API server: every appliedTo shape of Antrea's
// table, every matchExpressions operator, the exclusions (unscheduled, hostNetwork, terminated)
// and Pods without an IP.
import {
  compileLabelSelector,
  labelSelectorQuery,
  selectorMatches,
} from "../../shared/core/label-selector.js";
import type { AppliedTo } from "../../shared/egress/membership.js";
import type { LabelSelector } from "../../shared/core/label-selector.js";
import { PODS } from "../../shared/kube/index.js";
import { EgressWorld, RUN_LABEL } from "./egress-harness.js";

const world = new EgressWorld();
const run = { [RUN_LABEL]: world.run };
let prod = "";
let dev = "";
let bare = "";

beforeAll(async () => {
  [prod, dev, bare] = await Promise.all([
    world.namespace("prod", { env: "prod" }),
    world.namespace("dev", { env: "dev" }),
    world.namespace("bare"),
  ]);
  await Promise.all([
    world.pod(prod, "web-1", { app: "web", tier: "front" }, { ips: ["100.64.1.1", "fd00::1"] }),
    world.pod(prod, "db-1", { app: "db" }, { nodeName: "node-2", ips: ["100.64.1.2"] }),
    world.pod(dev, "web-2", { app: "web" }, { ips: ["100.64.1.3"] }),
    world.pod(dev, "no-ip", { app: "web" }, { phase: "Pending", ips: [] }),
    world.pod(bare, "web-3", { app: "web", legacy: "true" }, { ips: ["100.64.1.4"] }),
    world.pod(prod, "unscheduled", { app: "web" }, { nodeName: "", phase: "Pending", ips: [] }),
    world.pod(prod, "host", { app: "web" }, { hostNetwork: true, ips: ["100.66.0.5"] }),
    world.pod(prod, "done", { app: "web" }, { phase: "Succeeded" }),
    world.pod(prod, "failed", { app: "web" }, { phase: "Failed" }),
    // Terminated, so in no group: only here for the selector comparison (legacy="").
    world.pod(bare, "legacy-empty", { app: "other", legacy: "" }, { phase: "Succeeded" }),
  ]);
}, 60_000);

const p = (ns: () => string, name: string) => () => `${ns()}/${name}`;
const web1 = p(() => prod, "web-1");
const db1 = p(() => prod, "db-1");
const web2 = p(() => dev, "web-2");
const noIp = p(() => dev, "no-ip");
const web3 = p(() => bare, "web-3");
const excluded = [
  p(() => prod, "unscheduled"),
  p(() => prod, "host"),
  p(() => prod, "done"),
  p(() => prod, "failed"),
];

describe("an Egress's group lists exactly the Pods Antrea would select", () => {
  let cases = 0;
  it.each<[string, () => AppliedTo, Array<() => string>]>([
    [
      "podSelector app=web alone -> app=web Pods of every Namespace",
      () => ({ podSelector: { matchLabels: { ...run, app: "web" } } }),
      [web3, noIp, web2, web1],
    ],
    [
      "namespaceSelector env=prod alone -> every Pod of prod",
      () => ({ namespaceSelector: { matchLabels: { ...run, env: "prod" } } }),
      [db1, web1],
    ],
    [
      "podSelector app=web AND namespaceSelector env=prod -> prod/web-1",
      () => ({
        podSelector: { matchLabels: { app: "web" } },
        namespaceSelector: { matchLabels: { ...run, env: "prod" } },
      }),
      [web1],
    ],
    ["appliedTo: {} -> nobody", () => ({}), []],
    [
      "app In (web,db) -> all five eligible Pods",
      () => ({
        podSelector: {
          matchLabels: run,
          matchExpressions: [{ key: "app", operator: "In", values: ["web", "db"] }],
        },
      }),
      [web3, noIp, web2, db1, web1],
    ],
    [
      "app NotIn (web) -> prod/db-1",
      () => ({
        podSelector: {
          matchLabels: run,
          matchExpressions: [{ key: "app", operator: "NotIn", values: ["web"] }],
        },
      }),
      [db1],
    ],
    [
      "legacy Exists -> bare/web-3",
      () => ({
        podSelector: {
          matchLabels: run,
          matchExpressions: [{ key: "legacy", operator: "Exists" }],
        },
      }),
      [web3],
    ],
    [
      "app=web and legacy DoesNotExist -> web Pods except bare/web-3",
      () => ({
        podSelector: {
          matchLabels: { ...run, app: "web" },
          matchExpressions: [{ key: "legacy", operator: "DoesNotExist" }],
        },
      }),
      [noIp, web2, web1],
    ],
    [
      "namespaceSelector env NotIn (prod) -> Pods of dev and of the unlabelled Namespace",
      () => ({
        namespaceSelector: {
          matchLabels: run,
          matchExpressions: [{ key: "env", operator: "NotIn", values: ["prod"] }],
        },
      }),
      [web3, noIp, web2],
    ],
    [
      "namespaceSelector env DoesNotExist -> Pods of the unlabelled Namespace",
      () => ({
        namespaceSelector: {
          matchLabels: run,
          matchExpressions: [{ key: "env", operator: "DoesNotExist" }],
        },
      }),
      [web3],
    ],
  ])("%s", async (_title, appliedTo, expected) => {
    const name = world.name(`case-${(cases += 1)}`);
    await world.egress(name, appliedTo());
    expect(await world.egressEvent(name, "add")).toMatchObject({ kind: "done" });
    expect(await world.members(name)).toEqual(expected.map((member) => member()));
  });

  // The run label keeps this group to this file's Pods: a group of every Pod in the cluster would
  // also take other test files' Pods and change what their Pod events recompute.
  it("namespaceSelector: {} (with this run's Pods) -> eligible Pods of every Namespace, none of the excluded", async () => {
    const name = world.name("all-namespaces");
    await world.egress(name, { namespaceSelector: {}, podSelector: { matchLabels: run } });
    await world.egressEvent(name, "add");
    const members = (await world.members(name)) ?? [];
    expect(members).toEqual(expect.arrayContaining([web1(), db1(), web2(), noIp(), web3()]));
    for (const pod of excluded) expect(members).not.toContain(pod());
  });

  it("writes the group Antrea's agent needs: owner, nodeName and IPs per member, count, generation, Ready", async () => {
    const name = world.name("shape");
    await world.egress(name, {
      podSelector: { matchLabels: { ...run, app: "web" } },
      namespaceSelector: { matchLabels: { ...run, env: "dev" } },
    });
    await world.egressEvent(name, "add");
    const group = await world.group(name);
    expect(group?.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        apiVersion: "crd.antrea.io/v1beta1",
        kind: "Egress",
        name,
        controller: true,
      }),
    ]);
    expect(group?.metadata.ownerReferences?.[0]?.blockOwnerDeletion).toBeUndefined();
    expect(group?.status).toMatchObject({
      memberCount: 2,
      observedEgressGeneration: 1,
      members: [
        { pod: { namespace: dev, name: "no-ip" }, nodeName: "node-1", ips: [] },
        { pod: { namespace: dev, name: "web-2" }, nodeName: "node-1", ips: ["100.64.1.3"] },
      ],
      conditions: [
        expect.objectContaining({ type: "Ready", status: "True", reason: "MembersComputed" }),
      ],
    });
  });

  it("lists a Pod selected by two Egresses in both groups (Antrea's agent picks the effective one)", async () => {
    const [a, b] = [world.name("overlap-a"), world.name("overlap-b")];
    await world.egress(a, { podSelector: { matchLabels: { ...run, tier: "front" } } });
    await world.egress(b, { namespaceSelector: { matchLabels: { ...run, env: "prod" } } });
    await Promise.all([world.egressEvent(a), world.egressEvent(b)]);
    expect(await world.members(a)).toContain(web1());
    expect(await world.members(b)).toContain(web1());
  });
});

describe("the API server and the pure matcher agree on every selector we push down", () => {
  it.each<[string, LabelSelector]>([
    ["matchLabels", { matchLabels: { app: "web" } }],
    ["In", { matchExpressions: [{ key: "app", operator: "In", values: ["db", "web"] }] }],
    ["NotIn", { matchExpressions: [{ key: "app", operator: "NotIn", values: ["web"] }] }],
    ["Exists", { matchExpressions: [{ key: "legacy", operator: "Exists" }] }],
    ["DoesNotExist", { matchExpressions: [{ key: "legacy", operator: "DoesNotExist" }] }],
    [
      "In with an empty-string value",
      { matchExpressions: [{ key: "legacy", operator: "In", values: ["", "true"] }] },
    ],
    ["matchLabels with an empty value", { matchLabels: { legacy: "" } }],
    [
      "everything at once",
      {
        matchLabels: { app: "web" },
        matchExpressions: [
          { key: "tier", operator: "NotIn", values: ["back"] },
          { key: "legacy", operator: "DoesNotExist" },
        ],
      },
    ],
  ])("%s", async (_title, selector) => {
    const compiled = compileLabelSelector(
      { ...selector, matchLabels: { ...selector.matchLabels, ...run } },
      "s",
    );
    if (!compiled.ok) throw new Error("invalid test selector");
    const query = labelSelectorQuery(compiled.selector) ?? "";
    const all = await world.kube.list(PODS, { labelSelector: `${RUN_LABEL}=${world.run}` });
    const byServer = await world.kube.list(PODS, { labelSelector: query });
    const key = (pod: { metadata: { namespace?: string; name: string } }) =>
      `${pod.metadata.namespace}/${pod.metadata.name}`;
    const byMatcher = all
      .filter((pod) => selectorMatches(compiled.selector, pod.metadata.labels))
      .map(key);
    expect(byServer.map(key).sort()).toEqual(byMatcher.sort());
    expect(byMatcher.length).toBeGreaterThan(0);
  });
});
