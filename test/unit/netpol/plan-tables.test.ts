// The shape of the compiled tables: what a node agent loads. Scenarios from reference C.4 and
// issue 15: rule names and bits, CIDR entries that carry their containers' bits, except entries,
// port entries, peers shared by address group, named-port splits, and the 64-bit limit.
import { compileObjects, type DesiredEndpoint } from "../../../shared/netpol/index.js";
import type { RefWorld } from "../../../dev/netpol-oracle/reference.js";
import { namespace, pod, policy } from "./fixtures.js";

const ns = [namespace("web"), namespace("ops", { team: "ops" })];

function endpointOf(world: RefWorld, name: string): DesiredEndpoint {
  const found = compileObjects(world).endpoints.find((e) => e.name === name);
  if (found === undefined) throw new Error(`no endpoint ${name}`);
  return found;
}

describe("compiled NetworkPolicy tables", () => {
  it("names one bit per (policy, rule) and gives rules without ports an `any` port entry", () => {
    const world: RefWorld = {
      namespaces: ns,
      pods: [pod("web", "api", "10.0.0.1", { app: "api" })],
      policies: [
        policy("web", "b-allow", {
          ingress: [{ from: [{ ipBlock: { cidr: "10.8.0.0/16" } }] }, { ports: [{ port: 443 }] }],
        }),
        policy("web", "a-deny", { policyTypes: ["Ingress", "Egress"] }),
      ],
    };
    const { spec } = endpointOf(world, "api");
    expect(spec.ingress.rules).toEqual([
      { bit: 0, name: "web:b-allow_ingress_0" },
      { bit: 1, name: "web:b-allow_ingress_1" },
    ]);
    expect(spec.ingress.ports).toEqual([
      { protocol: "TCP", port: 443, bits: "0000000000000002" },
      { protocol: "any", bits: "0000000000000001" },
    ]);
    expect(spec.egress).toMatchObject({ isolated: true, failClosed: false, rules: [] });
  });

  it("gives each CIDR entry the bits of every containing CIDR, and except entries their rule's bit", () => {
    const world: RefWorld = {
      namespaces: ns,
      pods: [pod("web", "api", "10.0.0.1", { app: "api" })],
      policies: [
        policy("web", "p", {
          ingress: [
            { from: [{ ipBlock: { cidr: "10.0.0.0/8" } }] },
            { from: [{ ipBlock: { cidr: "10.1.0.0/16" } }] },
            { from: [{ ipBlock: { cidr: "172.16.0.0/12", except: ["172.16.1.0/24"] } }] },
            { from: [{ ipBlock: { cidr: "fd00::/8" } }] },
          ],
        }),
      ],
    };
    const { spec } = endpointOf(world, "api");
    expect(spec.ingress.cidrs).toEqual([
      { cidr: "10.0.0.0/8", bits: "0000000000000001" },
      { cidr: "10.1.0.0/16", bits: "0000000000000003" },
    ]);
    expect(spec.ingress.cidrsWithExcept).toEqual([
      { cidr: "172.16.0.0/12", bits: "0000000000000004" },
    ]);
    expect(spec.ingress.excepts).toEqual([{ cidr: "172.16.1.0/24", bits: "0000000000000004" }]);
  });

  it("stores label-selected peers once per policy, referenced by every endpoint", () => {
    const clients = Array.from({ length: 50 }, (_, i) =>
      pod("ops", `client-${i}`, `10.2.0.${i + 1}`, { role: "client" }),
    );
    const servers = Array.from({ length: 50 }, (_, i) =>
      pod("web", `server-${i}`, `10.3.0.${i + 1}`, { role: "server" }),
    );
    const world: RefWorld = {
      namespaces: ns,
      pods: [...clients, ...servers],
      policies: [
        policy("web", "from-ops", {
          podSelector: { matchLabels: { role: "server" } },
          ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: "ops" } } }] }],
        }),
      ],
    };
    const compiled = compileObjects(world);
    expect(compiled.endpoints).toHaveLength(50);
    const [peerSet] = compiled.peerSets;
    expect(peerSet?.spec.groups).toEqual([
      { name: "ingress_0", addresses: clients.map((c) => c.status?.podIP) },
    ]);
    for (const endpoint of compiled.endpoints) {
      expect(endpoint.spec.ingress.peerGroups).toEqual([
        { peerSet: "from-ops", group: "ingress_0", bits: "0000000000000001" },
      ]);
    }
  });

  it("splits an egress named port into one bit per port it resolves to on the destinations", () => {
    const world: RefWorld = {
      namespaces: ns,
      pods: [
        pod("web", "client", "10.0.0.1", { app: "client" }),
        pod("ops", "a", "10.2.0.1", { app: "db" }, { ports: [{ name: "sql", port: 5432 }] }),
        pod("ops", "b", "10.2.0.2", { app: "db" }, { ports: [{ name: "sql", port: 6432 }] }),
        pod("ops", "c", "10.2.0.3", { app: "db" }, { ports: [{ name: "sql", port: 5432 }] }),
      ],
      policies: [
        policy("web", "to-db", {
          policyTypes: ["Egress"],
          egress: [
            {
              to: [{ namespaceSelector: {}, podSelector: { matchLabels: { app: "db" } } }],
              ports: [{ port: "sql" }],
            },
          ],
        }),
      ],
    };
    const compiled = compileObjects(world);
    const client = compiled.endpoints.find((e) => e.name === "client");
    expect(client?.spec.egress.rules).toEqual([
      { bit: 0, name: "web:to-db_egress_0:TCP/5432" },
      { bit: 1, name: "web:to-db_egress_0:TCP/6432" },
    ]);
    expect(compiled.peerSets[0]?.spec.groups).toEqual([
      { name: "egress_0:TCP/5432", addresses: ["10.2.0.1", "10.2.0.3"] },
      { name: "egress_0:TCP/6432", addresses: ["10.2.0.2"] },
    ]);
  });

  it("fails a direction closed past 64 rule bits and reports it on the endpoint and the policies", () => {
    const world: RefWorld = {
      namespaces: ns,
      pods: [pod("web", "api", "10.0.0.1")],
      policies: [
        policy("web", "many", {
          ingress: Array.from({ length: 65 }, (_, i) => ({ ports: [{ port: i + 1 }] })),
        }),
      ],
    };
    const compiled = compileObjects(world);
    const [endpoint] = compiled.endpoints;
    expect(endpoint?.spec.ingress).toMatchObject({ isolated: true, failClosed: true, rules: [] });
    expect(endpoint?.problems.map((p) => p.reason)).toEqual(["TooManyRules"]);
    expect(compiled.peerSets[0]?.problems.map((p) => p.message)).toEqual([
      "endpoint api: 65 ingress rule bits exceed the datapath's 64; all ingress traffic is denied",
    ]);
  });

  it("leaves out pods without an address, on the host network, or terminated", () => {
    const world: RefWorld = {
      namespaces: ns,
      pods: [
        pod("web", "running", "10.0.0.1"),
        pod("web", "host", "192.168.0.1", {}, { hostNetwork: true }),
        pod("web", "done", "10.0.0.3", {}, { phase: "Succeeded" }),
        { metadata: { name: "pending", namespace: "web" }, status: { phase: "Pending" } },
      ],
      policies: [policy("web", "deny", {})],
    };
    expect(compileObjects(world).endpoints.map((e) => e.name)).toEqual(["running"]);
  });

  it("is deterministic: the same world in another order compiles to identical tables", () => {
    const pods = [
      pod("web", "a", "10.0.0.1", { app: "a" }),
      pod("web", "b", "10.0.0.2", { app: "b" }),
      pod("ops", "c", "10.2.0.1", { app: "a" }),
    ];
    const policies = [
      policy("web", "x", { ingress: [{ from: [{ podSelector: { matchLabels: { app: "a" } } }] }] }),
      policy("web", "y", {
        policyTypes: ["Egress"],
        egress: [{ to: [{ namespaceSelector: {} }] }],
      }),
    ];
    const forward = compileObjects({ namespaces: ns, pods, policies });
    const backward = compileObjects({
      namespaces: [...ns].reverse(),
      pods: [...pods].reverse(),
      policies: [...policies].reverse(),
    });
    expect(JSON.stringify(backward)).toBe(JSON.stringify(forward));
  });
});
