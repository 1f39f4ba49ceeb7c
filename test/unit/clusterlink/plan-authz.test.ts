// Who clusterlink-authz decides for (the verified certificate, never the request), and what must
// hold before any policy is asked: the Peer exists, the Export exists and is valid for its
// generation, the client is one running Pod, the target is a source of the Import.
import { observeExport } from "../../../shared/clusterlink/observed.js";
import {
  ATTRIBUTES,
  compilePolicy,
  DEFAULT_DENY,
} from "../../../shared/clusterlink/plan-access.js";
import {
  clientOf,
  ingressPeerName,
  planEgress,
  planIngress,
  PRECONDITION,
  unverifiedCallersOf,
  type Caller,
  type EgressObserved,
  type IngressObserved,
} from "../../../shared/clusterlink/plan-authz.js";
import type { Pod } from "../../../shared/core/objects.js";

const verified = (...names: string[]): Caller => ({ verified: true, names });

describe("ingressPeerName: the Peer is the verified certificate's", () => {
  it.each<
    [string, Caller | undefined, string | undefined, "refuse" | "on-behalf-of-peer", unknown]
  >([
    ["a certificate naming ohio", verified("ohio"), undefined, "refuse", { peer: "ohio" }],
    ["the request naming the same Peer", verified("ohio"), "ohio", "refuse", { peer: "ohio" }],
    ["the request naming another Peer", verified("ohio"), "paris", "refuse", { status: 400 }],
    ["a certificate with no name", verified(), undefined, "refuse", { status: 403 }],
    ["a certificate naming two", verified("a", "b"), undefined, "refuse", { status: 403 }],
    ["no certificate", undefined, "ohio", "refuse", { status: 401, error: "unauthenticated" }],
    [
      "a certificate that did not verify",
      { verified: false, names: [], problem: "self-signed certificate" },
      "ohio",
      "refuse",
      { status: 401, message: expect.stringContaining("self-signed certificate") as unknown },
    ],
    [
      "no certificate, trusted caller naming ohio",
      undefined,
      "ohio",
      "on-behalf-of-peer",
      { peer: "ohio" },
    ],
    [
      "no certificate, trusted caller naming no one",
      undefined,
      undefined,
      "on-behalf-of-peer",
      { status: 400 },
    ],
  ])("%s", (_title, caller, claimed, mode, expected) => {
    expect(ingressPeerName(caller, claimed, mode)).toMatchObject(expected as object);
  });

  it.each([
    [{}, "refuse"],
    [{ CL_AUTHZ_UNVERIFIED: "on-behalf-of-peer" }, "on-behalf-of-peer"],
    [{ CL_AUTHZ_UNVERIFIED: "on-behalf-of-peers" }, "refuse"],
    [{ CL_AUTHZ_UNVERIFIED: "true" }, "refuse"],
  ])("CL_AUTHZ_UNVERIFIED %j: %s", (env, mode) => {
    expect(unverifiedCallersOf(env)).toBe(mode);
  });
});

const everyone = [{ workloadSelector: {} }];
const allowAll = compilePolicy({
  name: "data/everyone",
  privileged: false,
  namespace: "data",
  spec: { action: "allow", from: everyone, to: everyone },
});
const exportObject = (conditions: unknown[], generation = 1) =>
  observeExport({
    apiVersion: "clusterlink.net/v1alpha1",
    kind: "Export",
    metadata: { name: "db", namespace: "data", generation, labels: { tier: "gold" } },
    spec: { port: 5432 },
    status: { conditions },
  });
const valid = (observedGeneration = 1) => ({
  type: "ExportValid",
  status: "True",
  reason: "Verified",
  message: "",
  lastTransitionTime: "2026-01-01T00:00:00Z",
  observedGeneration,
});
const ingress = (over: Partial<IngressObserved> = {}): IngressObserved => ({
  clNamespace: "clusterlink-system",
  peerName: "ohio",
  peer: { name: "ohio", labels: { region: "us" } },
  exportRef: { namespace: "data", name: "db" },
  export: exportObject([valid()]),
  client: { [ATTRIBUTES.clientNamespace]: "app" },
  policies: [allowAll],
  ...over,
});

describe("planIngress: what must hold before a policy is asked", () => {
  it.each<[string, Partial<IngressObserved>, string, RegExp]>([
    [
      "no such Peer",
      { peer: undefined },
      PRECONDITION.unknownPeer,
      /no Peer ohio in clusterlink-system/,
    ],
    ["no such Export", { export: undefined }, PRECONDITION.exportNotFound, /no Export data\/db/],
    [
      "an Export not verified yet",
      { export: exportObject([]) },
      PRECONDITION.exportNotValid,
      /not verified yet/,
    ],
    [
      "an invalid Export",
      {
        export: exportObject([
          { ...valid(), status: "False", message: "export service 'data/db' does not exist" },
        ]),
      },
      PRECONDITION.exportNotValid,
      /does not exist/,
    ],
    [
      "an Export changed since it was verified",
      { export: exportObject([valid(1)], 2) },
      PRECONDITION.exportNotValid,
      /not verified again yet/,
    ],
  ])("%s: denied", (_title, over, policy, message) => {
    const decision = planIngress(ingress(over));
    expect(decision).toMatchObject({ action: "deny", policy, tier: "precondition" });
    expect(decision.message).toMatch(message);
  });

  it("all there: the policies decide, with the Peer's status labels and the Export's labels", () => {
    const policy = compilePolicy({
      name: "data/us-gold",
      privileged: false,
      namespace: "data",
      spec: {
        action: "allow",
        from: [
          { workloadSelector: { matchLabels: { [`${ATTRIBUTES.peerLabelPrefix}region`]: "us" } } },
        ],
        to: [
          {
            workloadSelector: { matchLabels: { [`${ATTRIBUTES.exportLabelPrefix}tier`]: "gold" } },
          },
        ],
      },
    });
    expect(planIngress(ingress({ policies: [policy] }))).toEqual({
      action: "allow",
      policy: "data/us-gold",
      tier: "namespaced",
    });
    const paris = { name: "paris", labels: { region: "eu" } };
    expect(
      planIngress(ingress({ peer: paris, peerName: "paris", policies: [policy] })).policy,
    ).toBe(DEFAULT_DENY);
  });

  it("a Peer no heartbeat has reported labels for: a deny on its labels fails closed", () => {
    const noUs = compilePolicy({
      name: "data/no-us",
      privileged: false,
      namespace: "data",
      spec: {
        action: "deny",
        from: [
          { workloadSelector: { matchLabels: { [`${ATTRIBUTES.peerLabelPrefix}region`]: "us" } } },
        ],
        to: everyone,
      },
    });
    const decision = planIngress(
      ingress({ peer: { name: "ohio", labels: undefined }, policies: [allowAll, noUs] }),
    );
    expect(decision).toMatchObject({ action: "deny", policy: "data/no-us", failedClosed: true });
    expect(decision.message).toContain("labels of Peer ohio are not known yet");
  });
});

const pod = (name: string, over: Partial<Pod> = {}): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "app", labels: { app: "web" } },
  spec: { serviceAccountName: "reader" },
  status: { phase: "Running", podIP: "10.0.0.1" },
  ...over,
});

describe("clientOf: the local client is the one running Pod with its IP", () => {
  it("one Pod: its namespace, service account and labels", () => {
    expect(clientOf([pod("web")], "10.0.0.1")).toEqual({
      ok: true,
      pod: "app/web",
      attributes: {
        [ATTRIBUTES.clientNamespace]: "app",
        [ATTRIBUTES.clientServiceAccount]: "reader",
        [`${ATTRIBUTES.clientLabelPrefix}app`]: "web",
      },
    });
  });

  it("a finished Pod with the IP does not count", () => {
    const done = pod("old", { status: { phase: "Succeeded", podIP: "10.0.0.1" } });
    expect(clientOf([done, pod("web")], "10.0.0.1")).toMatchObject({ ok: true, pod: "app/web" });
  });

  it.each([
    ["none", [], /no running Pod has IP/],
    ["two (host network)", [pod("a"), pod("b")], /2 Pods have IP 10.0.0.1 \(app\/a, app\/b\)/],
  ])("%s: cannot tell", (_title, pods, message) => {
    expect(clientOf(pods, "10.0.0.1")).toEqual({
      ok: false,
      message: expect.stringMatching(message) as unknown,
    });
  });
});

describe("planEgress: each source of the Import, towards its Peer's status labels", () => {
  const source = (peer: string) => ({ peer, exportName: "db", exportNamespace: "data" });
  const euOnly = compilePolicy({
    name: "app/eu",
    privileged: false,
    namespace: "app",
    spec: {
      action: "allow",
      from: everyone,
      to: [
        { workloadSelector: { matchLabels: { [`${ATTRIBUTES.peerLabelPrefix}region`]: "eu" } } },
      ],
    },
  });
  const egress = (over: Partial<EgressObserved> = {}): EgressObserved => ({
    importRef: { namespace: "app", name: "db" },
    importSpec: { port: 5432, lbScheme: "round-robin", sources: [source("ohio"), source("paris")] },
    client: clientOf([pod("web")], "10.0.0.1"),
    chosen: undefined,
    peers: new Map([
      ["ohio", { name: "ohio", labels: { region: "us" } }],
      ["paris", { name: "paris", labels: { region: "eu" } }],
    ]),
    policies: [euOnly],
    ...over,
  });

  it("no source chosen: every source decided in order, the first allowed picked", () => {
    const plan = planEgress(egress());
    expect(plan.source).toEqual(source("paris"));
    expect(plan.decision).toMatchObject({ action: "allow", policy: "app/eu" });
    expect(plan.sources.map((s) => s.decision.action)).toEqual(["deny", "allow"]);
  });

  it.each<[string, Partial<EgressObserved>, string]>([
    ["no Import", { importSpec: undefined }, PRECONDITION.importNotFound],
    ["no client", { client: { ok: false, message: "no running Pod" } }, PRECONDITION.unknownClient],
    ["a target that is no source", { chosen: source("mallory") }, PRECONDITION.notASource],
    [
      "a source whose Peer is gone",
      { chosen: source("ohio"), peers: new Map() },
      PRECONDITION.unknownPeer,
    ],
  ])("%s: denied", (_title, over, policy) => {
    expect(planEgress(egress(over)).decision).toMatchObject({ action: "deny", policy });
  });
});
