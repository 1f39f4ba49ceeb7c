/**
 * A generated NetworkPolicy world for the netpol bench rows: Namespaces labelled with a team,
 * Pods labelled app/tier with named ports, and policies of mixed shapes (default deny, allow from
 * an app, from a team's namespaces, ipBlock with except and a port range, egress to a named port).
 * Deterministic for a given size, so runs compare.
 */
import { podAddress } from "../../dev/control-plane/addresses.js";

export interface NetpolBenchSizes {
  readonly pods: number;
  readonly namespaces: number;
  readonly policies: number;
}

export interface RawNetpolWorld {
  readonly namespaces: Record<string, unknown>[];
  readonly pods: Record<string, unknown>[];
  readonly policies: Record<string, unknown>[];
}

const APPS = 20;
const TEAMS = 10;

function policyOf(i: number, namespace: string): Record<string, unknown> {
  const app = `a${i % APPS}`;
  const meta = { name: `np-${i}`, namespace, uid: `np-uid-${i}` };
  switch (i % 5) {
    case 0:
      return { metadata: meta, spec: { podSelector: {}, policyTypes: ["Ingress", "Egress"] } };
    case 1:
      return {
        metadata: meta,
        spec: {
          podSelector: { matchLabels: { app } },
          ingress: [
            {
              from: [{ podSelector: { matchLabels: { app: `a${(i + 1) % APPS}` } } }],
              ports: [{ port: 8080 }],
            },
          ],
        },
      };
    case 2:
      return {
        metadata: meta,
        spec: {
          podSelector: {
            matchExpressions: [{ key: "tier", operator: "In", values: ["web", "api"] }],
          },
          ingress: [
            {
              from: [
                {
                  namespaceSelector: { matchLabels: { team: `t${i % TEAMS}` } },
                  podSelector: { matchLabels: { tier: "web" } },
                },
              ],
              ports: [{ port: "http" }],
            },
          ],
        },
      };
    case 3:
      return {
        metadata: meta,
        spec: {
          podSelector: { matchLabels: { app } },
          policyTypes: ["Egress"],
          egress: [
            {
              to: [{ ipBlock: { cidr: "172.16.0.0/12", except: ["172.16.1.0/24"] } }],
              ports: [{ port: 30000, endPort: 30100 }],
            },
            { ports: [{ protocol: "UDP", port: 53 }] },
          ],
        },
      };
    default:
      return {
        metadata: meta,
        spec: {
          podSelector: { matchLabels: { tier: "api" } },
          policyTypes: ["Egress"],
          egress: [
            {
              to: [{ namespaceSelector: { matchLabels: { team: `t${i % TEAMS}` } } }],
              ports: [{ port: "metrics" }],
            },
          ],
        },
      };
  }
}

export function netpolWorld(sizes: NetpolBenchSizes, prefix = "bench"): RawNetpolWorld {
  const nsName = (i: number): string => `${prefix}-ns-${i}`;
  const namespaces = Array.from({ length: sizes.namespaces }, (_, i) => ({
    metadata: { name: nsName(i), labels: { team: `t${i % TEAMS}` } },
  }));
  const tiers = ["web", "api", "db"];
  const pods = Array.from({ length: sizes.pods }, (_, i) => ({
    metadata: {
      name: `pod-${i}`,
      namespace: nsName(i % sizes.namespaces),
      uid: `pod-uid-${i}`,
      labels: { app: `a${i % APPS}`, tier: tiers[i % 3] ?? "web" },
    },
    spec: {
      nodeName: `node-${i % 50}`,
      containers: [
        {
          name: "app",
          image: "example.invalid/app:1",
          ports: [
            { name: "http", containerPort: 8080 + (i % 2) },
            { name: "metrics", containerPort: 9090 + (i % 3) },
          ],
        },
      ],
    },
    status: {
      phase: "Running",
      hostIP: `100.66.${Math.floor(i / 200) % 256}.${i % 50}`,
      podIP: podAddress(i),
      podIPs: [{ ip: podAddress(i) }],
    },
  }));
  const policies = Array.from({ length: sizes.policies }, (_, i) =>
    policyOf(i, nsName(i % sizes.namespaces)),
  );
  return { namespaces, pods, policies };
}
