// Which tables an event makes network-policy-sync read and compare, and the writes that follow.
import type { IntakeEvent } from "../../../shared/events/types.js";
import {
  compileNetworkPolicies,
  compileObjects,
  desiredEndpointTable,
  desiredPeerSetTable,
  EVERY,
  NAMESPACE_SELECTOR_LABEL,
  netpolTriggerFromEvent,
  parseWorld,
  planTableScope,
  planTableWrites,
  type StoredTable,
} from "../../../shared/netpol/index.js";
import { namespace, pod, policy } from "./fixtures.js";

const ref = (apiVersion: string, kind: string, ns: string, name: string): IntakeEvent => ({
  type: "object",
  id: "1",
  action: "update",
  ref: { apiVersion, kind, namespace: ns, name },
});

describe("network-policy-sync events", () => {
  it.each([
    [ref("v1", "Pod", "web", "api"), { kind: "pod", namespace: "web", name: "api" }],
    [ref("v1", "Namespace", "", "web"), { kind: "namespace", name: "web" }],
    [
      ref("networking.k8s.io/v1", "NetworkPolicy", "web", "p"),
      { kind: "policy", namespace: "web", name: "p" },
    ],
    [ref("", "NetworkPolicy", "web", "p"), { kind: "policy", namespace: "web", name: "p" }],
  ])("%j asks for %j", (event, trigger) => {
    expect(netpolTriggerFromEvent(event)).toEqual({ ok: true, trigger });
  });

  it.each([
    [ref("apps/v1", "Deployment", "web", "d"), "UnknownKind"],
    [ref("extensions/v1beta1", "NetworkPolicy", "web", "p"), "UnknownKind"],
    [ref("v1", "constructor", "web", "p"), "UnknownKind"],
    [ref("v1", "Pod", "", "api"), "MissingName"],
  ])("%j is refused as %s", (event, code) => {
    expect(netpolTriggerFromEvent(event)).toMatchObject({ ok: false, code });
  });
});

describe("the tables an event can change", () => {
  const { world } = parseWorld({
    namespaces: [namespace("web")],
    pods: [
      pod("web", "api", "10.0.0.1", { app: "api" }),
      pod("web", "db", "10.0.0.2", { app: "db" }),
    ],
    policies: [
      policy("web", "to-db", {
        podSelector: { matchLabels: { app: "api" } },
        policyTypes: ["Egress"],
        egress: [{ ports: [{ port: "sql" }] }],
      }),
    ],
  });

  it("a Pod: its own table, the labelled tables of egress named-port policies, every peer set", () => {
    expect(planTableScope({ kind: "pod", namespace: "web", name: "db" })).toEqual({
      endpoints: { list: null, labelled: true, keys: ["web/db"] },
      peerSets: { list: EVERY, labelled: false, keys: [] },
    });
  });

  it("a Namespace: the labelled peer sets and endpoint tables; every peer set while older ones exist", () => {
    expect(planTableScope({ kind: "namespace", name: "web" })).toEqual({
      endpoints: { list: null, labelled: true, keys: [] },
      peerSets: { list: null, labelled: true, keys: [] },
    });
    expect(planTableScope({ kind: "namespace", name: "web" }, true).peerSets).toEqual({
      list: EVERY,
      labelled: false,
      keys: [],
    });
  });

  it("labels the peer sets of policies with a namespaceSelector peer, and only those", () => {
    const { world: two } = parseWorld({
      namespaces: [namespace("web", { team: "a" })],
      pods: [pod("web", "api", "10.0.0.1", { app: "api" })],
      policies: [
        policy("web", "from-team", {
          podSelector: {},
          ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: "a" } } }] }],
        }),
        policy("web", "from-app", {
          podSelector: {},
          ingress: [{ from: [{ podSelector: { matchLabels: { app: "api" } } }] }],
        }),
      ],
    });
    const sets = compileNetworkPolicies(two).peerSets.map(desiredPeerSetTable);
    expect(
      sets.map((s) => [s.name, s.labelled, s.object.metadata.labels?.[NAMESPACE_SELECTOR_LABEL]]),
    ).toEqual([
      ["from-app", false, undefined],
      ["from-team", true, "true"],
    ]);
  });

  it("a NetworkPolicy: the endpoint tables of its namespace and its own peer set", () => {
    expect(planTableScope({ kind: "policy", namespace: "web", name: "to-db" })).toEqual({
      endpoints: { list: { namespace: "web" }, labelled: false, keys: [] },
      peerSets: { list: null, labelled: false, keys: ["web/to-db"] },
    });
  });

  it("labels the tables an egress named-port policy applies to, and only those", () => {
    const compiled = compileNetworkPolicies(world);
    expect(compiled.endpoints.map((e) => [e.name, desiredEndpointTable(e).labelled])).toEqual([
      ["api", true],
    ]);
  });
});

describe("writes", () => {
  const compiled = compileObjects({
    namespaces: [namespace("web")],
    pods: [pod("web", "api", "10.0.0.1")],
    policies: [policy("web", "deny", {})],
  });
  const [api] = compiled.endpoints.map(desiredEndpointTable);
  if (api === undefined) throw new Error("no table");
  const stored = (content: string | null, name = "api"): StoredTable => ({
    kind: "endpoint",
    namespace: "web",
    name,
    resourceVersion: "7",
    content,
    labels: {},
    annotations: {},
    ownerUid: "",
    parsed: null,
  });
  const reads = { list: { namespace: "web" }, labelled: false, keys: [] };

  it("creates a missing table, replaces a different one at its version, leaves an equal one", () => {
    expect(planTableWrites("endpoint", reads, [api], [])).toEqual([
      { action: "create", desired: api },
    ]);
    expect(planTableWrites("endpoint", reads, [api], [stored("{}")])).toEqual([
      { action: "replace", desired: api, resourceVersion: "7", previous: stored("{}") },
    ]);
    expect(planTableWrites("endpoint", reads, [api], [stored(api.content)])).toEqual([]);
  });

  it("deletes a stored table nobody wants, and creates none outside the scope read", () => {
    const orphan = stored("{}", "gone");
    expect(planTableWrites("endpoint", reads, [api], [stored(api.content), orphan])).toEqual([
      { action: "delete", stored: orphan },
    ]);
    const elsewhere = { list: null, labelled: false, keys: ["web/other"] };
    expect(planTableWrites("endpoint", elsewhere, [api], [])).toEqual([]);
  });
});
