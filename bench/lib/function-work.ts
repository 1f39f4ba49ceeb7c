/**
 * Real work for each function that is not a rule function, for a row that runs a function as its
 * own process (function-memory): an EgressGroup computed per Egress, a NetworkPolicy compiled per
 * policy, an Export verified per Export, a port leased per Import, Peers heartbeaten against
 * dev/peer-gateway-sim, authz decisions. Each piece has a first event that runs the function's
 * path without the work (for "idle"), a prepare step the bench does (not in the function's CPU),
 * the work as the connector (or a caller) sends it, and a check of the end state the work must
 * leave: work that did nothing is reported, not counted as done.
 *
 * Everything lives in namespaces of its own (the ClusterLink functions get CL_NAMESPACE set to
 * one), and close() deletes what later rows would see cluster-wide: Egresses and their groups
 * (no controller-manager collects them), NetworkPolicies and their tables, Pods and Imports.
 */
import path from "node:path";
import pLimit from "p-limit";
import * as z from "zod";
import { PeerGatewayFleet } from "../../dev/peer-gateway-sim/index.js";
import { ATTRIBUTES } from "../../shared/clusterlink/index.js";
import type { BenchContext } from "./context.js";
import { postObjectEvent, postResync, type EventReply } from "./events.js";
import type { RawApi } from "./raw-api.js";
import { int } from "./stats.js";

/** What a function did for the row, and the checks of its end state that failed. */
export interface Work {
  readonly did: string;
  readonly failures: number;
  readonly example?: string;
}

export interface FunctionWork {
  readonly fn: string;
  /** Environment the function's process needs beyond KUBECONFIG. */
  readonly env: Readonly<Record<string, string>>;
  /** One small event through the function's whole path, without its work; true when answered. */
  first(url: string): Promise<boolean>;
  /** What the work needs, created by the bench after "idle" was measured. */
  prepare(): Promise<void>;
  /** The work, then its end state checked. */
  run(url: string): Promise<Work>;
}

export interface WorkSizes {
  readonly pods: number;
  readonly egresses: number;
  readonly policies: number;
  readonly exports: number;
  readonly imports: number;
  readonly peers: number;
  readonly decisions: number;
}

export const FULL_WORK: WorkSizes = {
  pods: 500,
  egresses: 20,
  policies: 20,
  exports: 50,
  imports: 50,
  peers: 20,
  decisions: 1_000,
};

export const QUICK_WORK: WorkSizes = {
  pods: 100,
  egresses: 5,
  policies: 5,
  exports: 10,
  imports: 10,
  peers: 5,
  decisions: 200,
};

/** Events in flight at once, as a connector sends them. */
const CONCURRENCY = 8;
const APPS = 10;
const RUN_LABEL = "bench.sdewan/memory";
const CL = "/apis/clusterlink.net/v1alpha1";
const EGRESSES = "/apis/crd.antrea.io/v1beta1/egresses";
const EGRESS_GROUPS = "/apis/sdewan.akraino.org/v1alpha1/egressgroups";
const NETPOL = "/apis/netpol.sdewan.akraino.org/v1alpha1";

const itemsSchema = z.object({
  items: z.array(
    z.object({
      metadata: z.object({ name: z.string() }),
      spec: z.record(z.string(), z.unknown()).optional(),
      status: z.record(z.string(), z.unknown()).optional(),
    }),
  ),
});
type Item = z.infer<typeof itemsSchema>["items"][number];

const conditionsSchema = z
  .array(z.object({ type: z.string(), status: z.string() }))
  .optional()
  .catch(undefined);
const conditionOf = (item: Item | undefined, type: string): string | undefined =>
  conditionsSchema.parse(item?.status?.["conditions"])?.find((c) => c.type === type)?.status;

/** Counts failed checks and keeps the first as the example. */
class Tally {
  failures = 0;
  example: string | undefined;
  fail(what: string): void {
    this.failures += 1;
    this.example ??= what;
  }
  work(did: string): Work {
    return {
      did,
      failures: this.failures,
      ...(this.example === undefined ? {} : { example: this.example }),
    };
  }
}

/** Where the work happens: namespaces of the row's own. */
interface Places {
  readonly run: string;
  /** Pods, NetworkPolicies, Services and Exports, Imports, the AccessPolicy. */
  readonly namespace: string;
  /** CL_NAMESPACE of the ClusterLink functions here: the Peers. */
  readonly clNamespace: string;
  /** A namespace that holds nothing: first events name objects there. */
  readonly empty: string;
}

export class WorkWorld implements Places {
  readonly run: string;
  readonly namespace: string;
  readonly clNamespace: string;
  readonly empty: string;

  private constructor(
    private readonly ctx: BenchContext,
    readonly sizes: WorkSizes,
    places: Places,
    readonly fleet: PeerGatewayFleet,
  ) {
    this.run = places.run;
    this.namespace = places.namespace;
    this.clNamespace = places.clNamespace;
    this.empty = places.empty;
  }

  static async create(ctx: BenchContext, sizes: WorkSizes): Promise<WorkWorld> {
    const run = Math.random().toString(36).slice(2, 7);
    const namespace = await ctx.cluster.namespace("mem-work", { [RUN_LABEL]: run });
    const clNamespace = await ctx.cluster.namespace("mem-cl");
    const empty = await ctx.cluster.namespace("mem-empty");
    const peers = Array.from({ length: sizes.peers }, (_, i) => ({ name: `peer-${i}` }));
    const fleet = await PeerGatewayFleet.start({
      dir: path.join(ctx.workDir, "memory-peer-gateways"),
      peers,
    });
    const world = new WorkWorld(ctx, sizes, { run, namespace, clNamespace, empty }, fleet);
    await world.createPods();
    return world;
  }

  /** Kept-alive admin requests for setup and checks. */
  get raw(): RawApi {
    return this.ctx.cluster.raw;
  }

  async list(url: string): Promise<Item[]> {
    return itemsSchema.parse(JSON.parse((await this.raw.must("GET", url)).body)).items;
  }

  /** Pods labelled app a0..a9 with a named port, Running with an address (data only). */
  private async createPods(): Promise<void> {
    const limit = pLimit(32);
    const base = `/api/v1/namespaces/${this.namespace}/pods`;
    await Promise.all(
      Array.from({ length: this.sizes.pods }, (_, i) =>
        limit(async () => {
          const name = `p${i}`;
          await this.raw.must("POST", base, {
            metadata: { name, labels: { app: `a${i % APPS}` } },
            spec: {
              nodeName: "node-1",
              containers: [
                {
                  name: "app",
                  image: "example.invalid/app:1",
                  ports: [{ name: "http", containerPort: 8080 }],
                },
              ],
            },
          });
          // 198.18.0.0/15, the benchmarking range: only data, nothing connects to it.
          const ip = `198.18.${i >> 8}.${i & 255}`;
          await this.raw.mergePatch(`${base}/${name}/status`, {
            status: { phase: "Running", hostIP: "198.19.0.1", podIP: ip, podIPs: [{ ip }] },
          });
        }),
      ),
    );
  }

  egressName(i: number): string {
    return `mem-${this.run}-${i}`;
  }

  /** Deletes what later rows would see cluster-wide; best effort, each on its own. */
  async close(): Promise<void> {
    const del = (url: string): Promise<unknown> => this.raw.request("DELETE", url).catch(() => 0);
    await Promise.all(
      Array.from({ length: this.sizes.egresses }, (_, i) => [
        del(`${EGRESSES}/${this.egressName(i)}`),
        del(`${EGRESS_GROUPS}/${this.egressName(i)}`),
      ]).flat(),
    );
    await Promise.all([
      del(`/apis/networking.k8s.io/v1/namespaces/${this.namespace}/networkpolicies`),
      del(`${NETPOL}/namespaces/${this.namespace}/networkpolicyendpoints`),
      del(`${NETPOL}/namespaces/${this.namespace}/networkpolicypeersets`),
      del(`${CL}/namespaces/${this.namespace}/imports`),
      del(`/api/v1/namespaces/${this.namespace}/pods?gracePeriodSeconds=0`),
    ]);
    await this.fleet.close();
  }
}

/** Each event of `refs`, CONCURRENCY at a time; a reply other than 202 is a failure. */
async function deliver(
  url: string,
  refs: readonly Parameters<typeof postObjectEvent>[1][],
  tally: Tally,
  concurrency = CONCURRENCY,
): Promise<EventReply[]> {
  const limit = pLimit(concurrency);
  return Promise.all(
    refs.map((ref) =>
      limit(async () => {
        const reply = await postObjectEvent(url, ref, "add");
        if (reply.status !== 202) tally.fail(`${ref.name}: ${reply.status} ${reply.detail}`);
        return reply;
      }),
    ),
  );
}

const missingPod = (world: WorkWorld): Parameters<typeof postObjectEvent>[1] => ({
  apiVersion: "v1",
  kind: "Pod",
  namespace: world.empty,
  name: "no-such-pod",
});

/** An EgressGroup computed per Egress (app a<i % 10> of the world's namespace). */
export function egressWork(world: WorkWorld): FunctionWork {
  const { egresses } = world.sizes;
  const ref = (i: number): Parameters<typeof postObjectEvent>[1] => ({
    apiVersion: "crd.antrea.io/v1beta1",
    kind: "Egress",
    namespace: "",
    name: world.egressName(i),
  });
  return {
    fn: "egress-group-sync",
    env: {},
    first: async (url) => (await postObjectEvent(url, missingPod(world))).status === 202,
    prepare: async () => {
      const limit = pLimit(CONCURRENCY);
      await Promise.all(
        Array.from({ length: egresses }, (_, i) =>
          limit(() =>
            world.raw.must("POST", EGRESSES, {
              apiVersion: "crd.antrea.io/v1beta1",
              kind: "Egress",
              metadata: { name: world.egressName(i) },
              spec: {
                appliedTo: {
                  namespaceSelector: { matchLabels: { [RUN_LABEL]: world.run } },
                  podSelector: { matchLabels: { app: `a${i % APPS}` } },
                },
                egressIP: "192.0.2.10",
              },
            }),
          ),
        ),
      );
    },
    run: async (url) => {
      const tally = new Tally();
      await deliver(
        url,
        Array.from({ length: egresses }, (_, i) => ref(i)),
        tally,
      );
      const groups = new Map((await world.list(EGRESS_GROUPS)).map((g) => [g.metadata.name, g]));
      let members = 0;
      for (let i = 0; i < egresses; i += 1) {
        const got = z
          .array(z.unknown())
          .catch([])
          .parse(groups.get(world.egressName(i))?.status?.["members"]).length;
        const want = Math.ceil((world.sizes.pods - (i % APPS)) / APPS);
        members += got;
        if (got !== want) tally.fail(`group ${world.egressName(i)}: ${got} members, not ${want}`);
      }
      return tally.work(
        `an Egress event per Egress (${egresses}, ${CONCURRENCY} at a time), ${int(members)} members computed over ${int(world.sizes.pods)} Pods`,
      );
    },
  };
}

/**
 * A NetworkPolicy compiled per policy: np-<i> selects app a<i % 10> and admits a<i+1> on 8080;
 * every other one also limits egress to the namespace's named port `http`. Its events one at a
 * time: each recomputes the namespace's tables, so concurrent ones would only race.
 */
export function netpolWork(world: WorkWorld): FunctionWork {
  const { policies } = world.sizes;
  const base = `/apis/networking.k8s.io/v1/namespaces/${world.namespace}/networkpolicies`;
  const policy = (i: number): Record<string, unknown> => ({
    metadata: { name: `np-${i}` },
    spec: {
      podSelector: { matchLabels: { app: `a${i % APPS}` } },
      ingress: [
        {
          from: [{ podSelector: { matchLabels: { app: `a${(i + 1) % APPS}` } } }],
          ports: [{ port: 8080 }],
        },
      ],
      ...(i % 2 === 1
        ? {
            policyTypes: ["Ingress", "Egress"],
            egress: [
              {
                to: [{ namespaceSelector: { matchLabels: { [RUN_LABEL]: world.run } } }],
                ports: [{ port: "http" }],
              },
            ],
          }
        : {}),
    },
  });
  return {
    fn: "network-policy-sync",
    env: {},
    first: async (url) => (await postObjectEvent(url, missingPod(world))).status === 202,
    prepare: async () => {
      for (let i = 0; i < policies; i += 1) await world.raw.must("POST", base, policy(i));
    },
    run: async (url) => {
      const tally = new Tally();
      const refs = Array.from({ length: policies }, (_, i) => ({
        apiVersion: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        namespace: world.namespace,
        name: `np-${i}`,
      }));
      await deliver(url, refs, tally, 1);
      const tables = `${NETPOL}/namespaces/${world.namespace}`;
      const [peerSets, endpoints] = await Promise.all([
        world.list(`${tables}/networkpolicypeersets`),
        world.list(`${tables}/networkpolicyendpoints`),
      ]);
      const selected = Math.min(policies, APPS);
      const wantEndpoints = Array.from({ length: world.sizes.pods }, (_, j) => j).filter(
        (j) => j % APPS < selected,
      ).length;
      if (peerSets.length !== policies)
        tally.fail(`${peerSets.length} NetworkPolicyPeerSets, not ${policies}`);
      if (endpoints.length !== wantEndpoints)
        tally.fail(`${endpoints.length} NetworkPolicyEndpoints, not ${wantEndpoints}`);
      return tally.work(
        `a NetworkPolicy event per policy (${policies}, one at a time), ${int(endpoints.length)} endpoint tables and ${peerSets.length} peer sets compiled over ${int(world.sizes.pods)} Pods`,
      );
    },
  };
}

/** An Export verified per Export, each against a Service of its name with its port. */
export function exportWork(world: WorkWorld): FunctionWork {
  const { exports } = world.sizes;
  const name = (i: number): string => `svc-${i}`;
  return {
    fn: "clusterlink-export",
    env: { CL_NAMESPACE: world.clNamespace },
    first: async (url) =>
      (
        await postObjectEvent(url, {
          apiVersion: "clusterlink.net/v1alpha1",
          kind: "Export",
          namespace: world.empty,
          name: "no-such-export",
        })
      ).status === 202,
    prepare: async () => {
      const limit = pLimit(CONCURRENCY);
      await Promise.all(
        Array.from({ length: exports }, (_, i) =>
          limit(async () => {
            await world.raw.must("POST", `/api/v1/namespaces/${world.namespace}/services`, {
              metadata: { name: name(i) },
              spec: { selector: { app: `a${i % APPS}` }, ports: [{ port: 80, targetPort: 8080 }] },
            });
            await world.raw.must("POST", `${CL}/namespaces/${world.namespace}/exports`, {
              apiVersion: "clusterlink.net/v1alpha1",
              kind: "Export",
              metadata: { name: name(i) },
              spec: { port: 80 },
            });
          }),
        ),
      );
    },
    run: async (url) => {
      const tally = new Tally();
      const refs = Array.from({ length: exports }, (_, i) => ({
        apiVersion: "clusterlink.net/v1alpha1",
        kind: "Export",
        namespace: world.namespace,
        name: name(i),
      }));
      await deliver(url, refs, tally);
      const items = await world.list(`${CL}/namespaces/${world.namespace}/exports`);
      const valid = items.filter((e) => conditionOf(e, "ExportValid") === "True").length;
      if (valid !== exports) tally.fail(`${valid} of ${exports} Exports ExportValid True`);
      return tally.work(
        `an Export event per Export (${exports}, ${CONCURRENCY} at a time), ${valid} verified against their Services`,
      );
    },
  };
}

/** A target port leased per Import, its two Services written; the source Peer is reachable. */
export function importWork(world: WorkWorld): FunctionWork {
  const { imports } = world.sizes;
  const peer = "source";
  const name = (i: number): string => `db-${i}`;
  return {
    fn: "clusterlink-import",
    env: { CL_NAMESPACE: world.clNamespace },
    first: async (url) =>
      (
        await postObjectEvent(url, {
          apiVersion: "clusterlink.net/v1alpha1",
          kind: "Import",
          namespace: world.empty,
          name: "no-such-import",
        })
      ).status === 202,
    prepare: async () => {
      const peers = `${CL}/namespaces/${world.clNamespace}/peers`;
      await world.raw.must("POST", peers, {
        apiVersion: "clusterlink.net/v1alpha1",
        kind: "Peer",
        metadata: { name: peer },
        spec: { gateways: [{ host: "127.0.0.1", port: 1 }] },
      });
      await world.raw.mergePatch(`${peers}/${peer}/status`, {
        status: {
          conditions: [
            {
              type: "PeerReachable",
              status: "True",
              reason: "Heartbeat",
              message: "",
              lastTransitionTime: new Date().toISOString(),
            },
          ],
        },
      });
      const limit = pLimit(CONCURRENCY);
      await Promise.all(
        Array.from({ length: imports }, (_, i) =>
          limit(() =>
            world.raw.must("POST", `${CL}/namespaces/${world.namespace}/imports`, {
              apiVersion: "clusterlink.net/v1alpha1",
              kind: "Import",
              metadata: { name: name(i) },
              spec: {
                port: 5432,
                sources: [{ peer, exportName: "db", exportNamespace: "data" }],
              },
            }),
          ),
        ),
      );
    },
    run: async (url) => {
      const tally = new Tally();
      const refs = Array.from({ length: imports }, (_, i) => ({
        apiVersion: "clusterlink.net/v1alpha1",
        kind: "Import",
        namespace: world.namespace,
        name: name(i),
      }));
      await deliver(url, refs, tally);
      const items = await world.list(`${CL}/namespaces/${world.namespace}/imports`);
      const leased = new Set(
        items.map((i) => i.spec?.["targetPort"]).filter((p) => typeof p === "number" && p > 0),
      );
      if (leased.size !== imports)
        tally.fail(`${leased.size} distinct leased ports for ${imports}`);
      return tally.work(
        `an Import add event per Import (${imports}, ${CONCURRENCY} at a time), ${leased.size} ports leased`,
      );
    },
  };
}

/** Every Peer heartbeaten over mutual TLS against its simulated gateway, by one resync. */
export function peerHealthWork(world: WorkWorld): FunctionWork {
  const { peers } = world.sizes;
  const names = Array.from({ length: peers }, (_, i) => `peer-${i}`);
  return {
    fn: "clusterlink-peer-health",
    env: { CL_NAMESPACE: world.clNamespace, CL_PEER_TLS_DIR: world.fleet.identityDir },
    // A resync while the ClusterLink namespace holds no Peer.
    first: async (url) => (await postResync(url)).status === 202,
    prepare: async () => {
      await Promise.all(
        names.map((peer) =>
          world.raw.must("POST", `${CL}/namespaces/${world.clNamespace}/peers`, {
            apiVersion: "clusterlink.net/v1alpha1",
            kind: "Peer",
            metadata: { name: peer },
            spec: world.fleet.peerSpec(peer),
          }),
        ),
      );
    },
    run: async (url) => {
      const tally = new Tally();
      const before = new Map(names.map((n) => [n, world.fleet.gateway(n).counters.healthy]));
      const reply = await postResync(url);
      if (reply.status !== 202) tally.fail(`resync: ${reply.status} ${reply.detail}`);
      const unanswered = names.filter(
        (n) => world.fleet.gateway(n).counters.healthy === before.get(n),
      );
      if (unanswered.length > 0)
        tally.fail(`${unanswered.length} gateways never asked (first: ${unanswered[0]})`);
      return tally.work(
        `one resync heartbeating ${peers} Peers over mutual TLS (dev/peer-gateway-sim), ${peers - unanswered.length} answered`,
      );
    },
  };
}

/** Access decisions from the live policies: an allow-all AccessPolicy in the export's namespace. */
export function authzWork(world: WorkWorld): FunctionWork {
  const { decisions } = world.sizes;
  const decide = async (
    url: string,
    namespace: string,
    i: number,
  ): Promise<{ status: number; allowed: boolean | undefined }> => {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      // No client certificate here: the Peer asked for is named in the request, as a trusted
      // in-cluster caller does (CL_AUTHZ_UNVERIFIED=on-behalf-of-peer); the Peer's own
      // attributes come from the Peer, never from the request.
      body: JSON.stringify({
        source: { [ATTRIBUTES.clientNamespace]: `client-${i % 10}` },
        peer: "source",
        export: { name: "authz-db", namespace },
      }),
    });
    const body = z.object({ allowed: z.boolean() }).safeParse(await res.json().catch(() => null));
    return { status: res.status, allowed: body.success ? body.data.allowed : undefined };
  };
  return {
    fn: "clusterlink-authz",
    env: { CL_NAMESPACE: world.clNamespace, CL_AUTHZ_UNVERIFIED: "on-behalf-of-peer" },
    first: async (url) => (await decide(url, world.empty, 0)).allowed !== undefined,
    prepare: async () => {
      // The Export decided on exists (an Export with a host is valid as it is).
      await world.raw.must("POST", `${CL}/namespaces/${world.namespace}/exports`, {
        apiVersion: "clusterlink.net/v1alpha1",
        kind: "Export",
        metadata: { name: "authz-db" },
        spec: { host: "db.example.invalid", port: 5432 },
      });
      const everyone = [{ workloadSelector: {} }];
      await world.raw.must("POST", `${CL}/namespaces/${world.namespace}/accesspolicies`, {
        apiVersion: "clusterlink.net/v1alpha1",
        kind: "AccessPolicy",
        metadata: { name: "allow-all" },
        spec: { action: "allow", from: everyone, to: everyone },
      });
    },
    run: async (url) => {
      const tally = new Tally();
      const limit = pLimit(CONCURRENCY);
      const replies = await Promise.all(
        Array.from({ length: decisions }, (_, i) => limit(() => decide(url, world.namespace, i))),
      );
      const undecided = replies.filter((r) => r.allowed === undefined);
      if (undecided.length > 0)
        tally.fail(
          `${undecided.length} requests not decided (first: HTTP ${undecided[0]?.status})`,
        );
      const allowed = replies.filter((r) => r.allowed === true).length;
      return tally.work(
        `a decision request per client (${int(decisions)}, ${CONCURRENCY} at a time), ${int(allowed)} allowed by the namespace's AccessPolicy`,
      );
    },
  };
}
