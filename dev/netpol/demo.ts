/**
 * `npm run netpol -- demo [namespace]`: the issue's demo of network-policy-sync on the cluster of
 * KUBECONFIG (e.g. `npm run demo -- --keep` or `npm run cluster:up`). In `namespace` (default
 * netpol-demo, created when missing) it writes Pods web (app=web, port http 8080), client
 * (role=client) and other (role=other) with the status a kubelet would write, a default-deny
 * ingress policy and one allow (clients to web's named port http), runs network-policy-sync's
 * handler on those policies' events in this process, and prints `netpol check` answers for a few
 * packets: each judged from the stored tables alone, as `npm run netpol -- check` does.
 */
import { randomBytes } from "node:crypto";
import { createNetworkPolicySync } from "../../functions/network-policy-sync/index.js";
import {
  NAMESPACES,
  NETWORK_POLICIES,
  PODS,
  isKubeError,
  type KubeClient,
} from "../../shared/kube/index.js";
import type { Packet } from "../../shared/netpol/index.js";
import { NODE_IP } from "../control-plane/addresses.js";
import { checkPacket, formatDecision } from "./check.js";

/** Written into the Pods' status only: tables are compiled from them, no packet is sent. */
const ADDRESSES = {
  web: "100.64.250.10",
  client: "100.64.250.11",
  other: "100.64.250.12",
} as const;

async function ensure(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    if (!isKubeError(error, "conflict")) throw error; // exists already: keep it
  }
}

async function pod(
  kube: KubeClient,
  namespace: string,
  name: keyof typeof ADDRESSES,
  labels: Record<string, string>,
  ports: { name: string; containerPort: number }[] = [],
): Promise<void> {
  await ensure(() =>
    kube.create(PODS, {
      metadata: { name, namespace, labels },
      spec: {
        nodeName: "node-1",
        containers: [{ name: "app", image: "example.invalid/app:1", ports }],
      },
    }),
  );
  const ip = ADDRESSES[name];
  await kube.patchStatus(
    PODS,
    { namespace, name },
    { phase: "Running", hostIP: NODE_IP, podIP: ip, podIPs: [{ ip }] },
  );
}

/** Sets the demo up, runs the function, returns the printed lines. */
export async function runNetpolDemo(
  kube: KubeClient,
  namespace = "netpol-demo",
): Promise<string[]> {
  await ensure(() => kube.create(NAMESPACES, { metadata: { name: namespace } }));
  await pod(kube, namespace, "web", { app: "web" }, [{ name: "http", containerPort: 8080 }]);
  await pod(kube, namespace, "client", { role: "client" });
  await pod(kube, namespace, "other", { role: "other" });
  const policies = {
    "default-deny": { podSelector: {}, policyTypes: ["Ingress"] },
    "web-from-clients": {
      podSelector: { matchLabels: { app: "web" } },
      ingress: [
        { from: [{ podSelector: { matchLabels: { role: "client" } } }], ports: [{ port: "http" }] },
      ],
    },
  };
  const fn = createNetworkPolicySync({ kube: () => kube });
  const lines: string[] = [];
  for (const [name, spec] of Object.entries(policies)) {
    await ensure(() => kube.create(NETWORK_POLICIES, { metadata: { name, namespace }, spec }));
    const outcome = await fn.handle(
      {
        type: "object",
        id: `demo-${randomBytes(4).toString("hex")}`,
        action: "add",
        ref: { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", namespace, name },
      },
      {
        correlationId: "netpol-demo",
        log: { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} },
        calls: { api: 0, cnf: 0 },
        signal: new AbortController().signal,
      },
    );
    lines.push(
      `network-policy-sync ${name}: ${outcome.kind} ${"result" in outcome ? outcome.result : ""}`,
    );
  }
  const packets: Packet[] = [
    {
      namespace,
      pod: "web",
      direction: "ingress",
      peerIP: ADDRESSES.client,
      protocol: "TCP",
      port: 8080,
    },
    {
      namespace,
      pod: "web",
      direction: "ingress",
      peerIP: ADDRESSES.other,
      protocol: "TCP",
      port: 8080,
    },
    {
      namespace,
      pod: "web",
      direction: "ingress",
      peerIP: ADDRESSES.client,
      protocol: "TCP",
      port: 9090,
    },
    {
      namespace,
      pod: "client",
      direction: "ingress",
      peerIP: ADDRESSES.web,
      protocol: "TCP",
      port: 8080,
    },
    {
      namespace,
      pod: "web",
      direction: "egress",
      peerIP: ADDRESSES.other,
      protocol: "UDP",
      port: 53,
    },
  ];
  for (const packet of packets) {
    lines.push(`netpol check: ${formatDecision(packet, await checkPacket(kube, packet))}`);
  }
  return lines;
}
