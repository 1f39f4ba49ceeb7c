// What `npm run netpol -- check` answers from the objects it reads (a KubeClient over a fixed
// set of objects; test/integration/netpol-edges.test.ts runs it as a process against the real
// API server): a denial names a peer set that is missing or stored failing closed for its size.
import { checkPacket } from "../../../dev/netpol/check.js";
import type { KubeClient, ResourceType } from "../../../shared/kube/index.js";
import {
  compileObjects,
  desiredEndpointTable,
  desiredPeerSetTable,
  type Packet,
} from "../../../shared/netpol/index.js";
import type { RefWorld } from "../../../dev/netpol-oracle/reference.js";
import { namespace, pod, policy } from "./fixtures.js";

const world: RefWorld = {
  namespaces: [namespace("shop")],
  pods: [
    pod("shop", "web", "10.0.0.1", { app: "web" }),
    ...[1, 2, 3, 4].map((i) => pod("shop", `client-${i}`, `10.0.1.${i}`, { role: "client" })),
  ],
  policies: [
    policy("shop", "web-from-clients", {
      podSelector: { matchLabels: { app: "web" } },
      ingress: [{ from: [{ podSelector: { matchLabels: { role: "client" } } }] }],
    }),
  ],
};

type Objects = Record<string, unknown>;

/** get and list over `objects` keyed "<plural>/<namespace>/<name>"; nothing else is called. */
function fixedKube(objects: Objects): KubeClient {
  const key = (type: ResourceType, ns: string | undefined, name: string) =>
    `${type.plural}/${ns ?? ""}/${name}`;
  return {
    get: (type: ResourceType, k: { namespace?: string; name: string }) =>
      Promise.resolve(objects[key(type, k.namespace, k.name)]),
    list: (type: ResourceType, options?: { namespace?: string }) =>
      Promise.resolve(
        Object.entries(objects)
          .filter(([k]) => k.startsWith(`${type.plural}/${options?.namespace ?? ""}`))
          .map(([, o]) => o),
      ),
  } as unknown as KubeClient;
}

function objectsOf(maxPeerSetBytes?: number): Objects {
  const compiled = compileObjects(world, maxPeerSetBytes === undefined ? {} : { maxPeerSetBytes });
  const objects: Objects = { "namespaces//shop": world.namespaces[0] };
  for (const p of world.pods) objects[`pods/shop/${p.metadata.name}`] = p;
  for (const e of compiled.endpoints)
    objects[`networkpolicyendpoints/shop/${e.name}`] = desiredEndpointTable(e).object;
  for (const s of compiled.peerSets)
    objects[`networkpolicypeersets/shop/${s.name}`] = desiredPeerSetTable(s).object;
  return objects;
}

const fromClient: Packet = {
  namespace: "shop",
  pod: "web",
  direction: "ingress",
  peerIP: "10.0.1.1",
  protocol: "TCP",
  port: 80,
};

describe("netpol check's answers", () => {
  it("allows a client by the rule that lets it in", async () => {
    expect(await checkPacket(fixedKube(objectsOf()), fromClient)).toEqual({
      verdict: "allow",
      reason: "allowed by rules",
      rules: ["shop:web-from-clients_ingress_0"],
    });
  });

  it("a denial names the peer set stored failing closed for its size", async () => {
    const answer = await checkPacket(fixedKube(objectsOf(600)), fromClient);
    expect(answer).toEqual({
      verdict: "deny",
      reason:
        "no rule allows it; peer set web-from-clients is too large to store: its peers are denied",
      rules: [],
    });
  });

  it("a denial names a peer set not stored yet", async () => {
    const objects = objectsOf();
    delete objects["networkpolicypeersets/shop/web-from-clients"];
    expect((await checkPacket(fixedKube(objects), fromClient)).reason).toBe(
      "no rule allows it; peer set web-from-clients is not stored yet",
    );
  });

  it("a Pod on its node's network is allowed: NetworkPolicies do not apply to it", async () => {
    const objects = objectsOf();
    objects["pods/shop/host"] = pod("shop", "host", "192.168.0.1", {}, { hostNetwork: true });
    expect(await checkPacket(fixedKube(objects), { ...fromClient, pod: "host" })).toMatchObject({
      verdict: "allow",
      reason: "the pod is on its node's network: NetworkPolicies do not apply",
    });
  });
});
