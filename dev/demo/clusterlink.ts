/**
 * The demo's ClusterLink part: two Peers whose gateways are dev/peer-gateway-sim (east healthy,
 * west silent), a two-port Service exported on one port, an Import of it from both Peers and an
 * AccessPolicy; the functions (through the connector's events) bring every object to its
 * conditions, which are printed, and clusterlink-authz is asked one decision.
 */
import { randomBytes } from "node:crypto";
import { KubeConfig } from "@kubernetes/client-node";
import type { PeerGatewayFleet } from "../peer-gateway-sim/index.js";
import {
  ATTRIBUTES,
  DEFAULT_CL_NAMESPACE,
  systemServiceName,
} from "../../shared/clusterlink/index.js";
import {
  clusterLinkResource,
  createKubeClient,
  isKubeError,
  NAMESPACES,
  SERVICES,
  type KubeClient,
  type KubeObject,
} from "../../shared/kube/index.js";

/** Peer names of the simulated fabric; the fleet must be started with these. */
export const DEMO_PEERS = [
  { name: "east", labels: { region: "eu-east" } },
  { name: "west", labels: { region: "us-west" }, mode: { mode: "silent" as const } },
];

const PEERS = clusterLinkResource("Peer");
const EXPORTS = clusterLinkResource("Export");
const IMPORTS = clusterLinkResource("Import");
const ACCESS_POLICIES = clusterLinkResource("AccessPolicy");

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message?: string;
}

const conditionsOf = (object: KubeObject | undefined): Condition[] =>
  ((object?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).slice();

const condition = (object: KubeObject | undefined, type: string): Condition | undefined =>
  conditionsOf(object).find((c) => c.type === type);

export class ClusterLinkDemo {
  private readonly kube: KubeClient;
  private readonly run = randomBytes(2).toString("hex");
  readonly exportNamespace = `cl-data-${this.run}`;
  readonly importNamespace = `cl-app-${this.run}`;

  constructor(kubeconfigPath: string) {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    this.kube = createKubeClient(kc);
  }

  /** Creates every object; the functions do the rest as the connector delivers the events. */
  async apply(fleet: PeerGatewayFleet): Promise<void> {
    const { kube } = this;
    for (const name of [DEFAULT_CL_NAMESPACE, this.exportNamespace, this.importNamespace]) {
      try {
        await kube.create(NAMESPACES, { metadata: { name } });
      } catch (error) {
        if (!isKubeError(error, "conflict")) throw error;
      }
    }
    for (const peer of DEMO_PEERS) {
      await kube.create(PEERS, {
        metadata: { name: peer.name, namespace: DEFAULT_CL_NAMESPACE },
        spec: fleet.peerSpec(peer.name),
      });
    }
    await kube.create(SERVICES, {
      metadata: { name: "db", namespace: this.exportNamespace },
      spec: {
        type: "ClusterIP",
        selector: { app: "db" },
        ports: [
          { name: "sql", port: 5432, protocol: "TCP" },
          { name: "metrics", port: 9187, protocol: "TCP" },
        ],
      },
    });
    await kube.create(EXPORTS, {
      metadata: { name: "db", namespace: this.exportNamespace },
      spec: { port: 5432 },
    });
    await kube.create(IMPORTS, {
      metadata: { name: "db", namespace: this.importNamespace },
      spec: {
        port: 5432,
        sources: DEMO_PEERS.map((p) => ({
          peer: p.name,
          exportName: "db",
          exportNamespace: this.exportNamespace,
        })),
      },
    });
    await kube.create(ACCESS_POLICIES, {
      metadata: { name: "app-may-read-db", namespace: this.exportNamespace },
      spec: {
        action: "allow",
        from: [
          {
            workloadSelector: {
              matchLabels: { [ATTRIBUTES.clientNamespace]: this.importNamespace },
            },
          },
        ],
        to: [{ workloadSelector: { matchLabels: { [ATTRIBUTES.exportName]: "db" } } }],
      },
    });
  }

  /** What is still missing, or null when every object shows its expected conditions. */
  async pending(): Promise<string | null> {
    const { kube } = this;
    const [east, west, exp, imp] = await Promise.all([
      kube.get(PEERS, { namespace: DEFAULT_CL_NAMESPACE, name: "east" }),
      kube.get(PEERS, { namespace: DEFAULT_CL_NAMESPACE, name: "west" }),
      kube.get(EXPORTS, { namespace: this.exportNamespace, name: "db" }),
      kube.get(IMPORTS, { namespace: this.importNamespace, name: "db" }),
    ]);
    const system = await kube.get(SERVICES, {
      namespace: DEFAULT_CL_NAMESPACE,
      name: systemServiceName(
        { namespace: this.importNamespace, name: "db" },
        DEFAULT_CL_NAMESPACE,
      ),
    });
    const user = await kube.get(SERVICES, { namespace: this.importNamespace, name: "db" });
    const missing = [
      condition(east, "PeerReachable")?.status === "True" ? "" : "Peer east reachable",
      condition(west, "PeerReachable")?.status === "False" ? "" : "Peer west unreachable",
      condition(exp, "Ready")?.status === "True" ? "" : "Export db Ready",
      condition(imp, "Ready")?.status === "True" ? "" : "Import db Ready",
      // Its sources: west's Peer is silent, and the Import says so once west's status does.
      condition(imp, "ImportSourcesReachable")?.message?.includes("Peer 'west' unreachable")
        ? ""
        : "Import db reporting west unreachable",
      system === undefined ? "the system Service" : "",
      user?.spec?.type === "ExternalName" ? "" : "the user ExternalName Service",
    ].filter(Boolean);
    return missing.length === 0 ? null : missing.join(", ");
  }

  /** One line per object and condition, as `kubectl get -o yaml` would show them. */
  async describe(): Promise<string[]> {
    const { kube } = this;
    const objects: [string, KubeObject | undefined][] = [
      ["Peer east", await kube.get(PEERS, { namespace: DEFAULT_CL_NAMESPACE, name: "east" })],
      ["Peer west", await kube.get(PEERS, { namespace: DEFAULT_CL_NAMESPACE, name: "west" })],
      [
        `Export ${this.exportNamespace}/db`,
        await kube.get(EXPORTS, { namespace: this.exportNamespace, name: "db" }),
      ],
      [
        `Import ${this.importNamespace}/db`,
        await kube.get(IMPORTS, { namespace: this.importNamespace, name: "db" }),
      ],
    ];
    const lines: string[] = [];
    for (const [label, object] of objects) {
      const extra =
        label.startsWith("Import") && object !== undefined
          ? ` (port ${String((object.spec as { port?: number }).port)} -> targetPort ${String((object.spec as { targetPort?: number }).targetPort)})`
          : label.startsWith("Peer")
            ? ` (labels ${JSON.stringify((object?.status as { labels?: object } | undefined)?.labels ?? {})})`
            : "";
      lines.push(`${label}${extra}`);
      for (const c of conditionsOf(object)) {
        const message = c.message ? ` "${c.message.slice(0, 110)}"` : "";
        lines.push(`  ${c.type.padEnd(22)} ${c.status.padEnd(5)} ${c.reason}${message}`);
      }
    }
    return lines;
  }

  /**
   * The request clusterlink-authz answers: Peer east's dataplane, for a client of the importing
   * namespace, reading the export. The demo's functions speak plain HTTP, so it asks as the
   * trusted in-cluster caller CL_AUTHZ_UNVERIFIED=on-behalf-of-peer allows, naming the Peer; the
   * Peer's labels still come from its status.
   */
  authzRequest(): unknown {
    return {
      peer: "east",
      source: { [ATTRIBUTES.clientNamespace]: this.importNamespace },
      export: { name: "db", namespace: this.exportNamespace },
    };
  }
}
