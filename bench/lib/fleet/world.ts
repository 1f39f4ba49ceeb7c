/**
 * The fleet rows' world (issue 28 item 4): a control plane of its own, N CNFs of two pods each
 * (dev/world), the connector and the two rule functions as the image runs them (one bundled
 * process per function, as their pods run), the rules of every CNF in one namespace.
 *
 * What it measures besides the end state: the functions' API requests by verb from the API
 * server's audit log (only their own user is audited, so the bench's and the connector's
 * requests stay out), the bytes etcd stored from its own metrics (the API server's metrics of
 * this version say how many etcd requests, not how big), the CNF requests and service restarts
 * of every simulator, and each function process's resident memory.
 */
import { open, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { startControlPlane, type ControlPlane } from "../../../dev/control-plane/control-plane.js";
import { CnfFleet, type Cnf } from "../../../dev/world/index.js";
import { createKubeClient, type KubeClient } from "../../../shared/kube/index.js";
import { PURPOSE_LABEL } from "../../../shared/kinds/index.js";
import { startConnector } from "../../soak/fleet.js";
import {
  DIST_SERVER,
  buildDist,
  dockerfileNodeArgs,
  dockerfileNodeOptions,
  freePort,
  spawnFunctionServer,
  waitReady,
  type FunctionProcess,
} from "../child.js";
import type { BenchContext } from "../context.js";
import { connectorConfig } from "../peer/ours.js";
import { RawApi } from "../raw-api.js";
import { writeDeploymentStatus } from "../peer/world.js";

/** The user the functions authenticate as: the audit policy logs only its requests. */
export const FUNCTIONS_USER = "sdewan-functions";
export const FLEET_FUNCTIONS = ["reconcile-rule", "on-deployment-ready"] as const;

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
  - level: Metadata
    users: ["${FUNCTIONS_USER}"]
  - level: None
`;

/** The fleet's control plane, shared by every size of one run (each size in its own namespace). */
export interface FleetPlane {
  readonly plane: ControlPlane;
  readonly raw: RawApi;
  readonly kube: KubeClient;
  readonly auditLog: string;
  /** etcd's counters: puts and the bytes of the keys and values they stored. */
  etcdWrites(): Promise<{ puts: number; bytes: number }>;
  stop(): Promise<void>;
}

export async function startFleetPlane(ctx: BenchContext): Promise<FleetPlane> {
  const policy = path.join(ctx.workDir, "fleet-audit-policy.yaml");
  const auditLog = path.join(ctx.workDir, "fleet-audit.log");
  await writeFile(policy, AUDIT_POLICY);
  const plane = await startControlPlane({
    users: [{ name: FUNCTIONS_USER, groups: ["system:masters"] }],
    extraApiserverArgs: [
      `--audit-policy-file=${policy}`,
      `--audit-log-path=${auditLog}`,
      "--audit-log-maxsize=0",
    ],
    log: (line) => ctx.log(`fleet control plane: ${line}`),
  });
  const raw = new RawApi(plane.server, plane.caPem, plane.admin.token, 64);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(plane.kubeconfigPath);
  return {
    plane,
    raw,
    kube: createKubeClient(kubeConfig),
    auditLog,
    async etcdWrites() {
      const text = await (await fetch(`${plane.etcdUrl}/metrics`)).text();
      const value = (name: string): number =>
        Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? NaN);
      return {
        puts: value("etcd_mvcc_put_total"),
        bytes: value("etcd_debugging_mvcc_total_put_size_in_bytes"),
      };
    },
    async stop() {
      raw.close();
      await plane.stop();
    },
  };
}

/** Audit events counted so far, by "<verb> <resource>" (e.g. "patch mwan3rules/status"). */
export class AuditCounter {
  private offset = 0;
  private pending = "";
  readonly counts = new Map<string, number>();

  constructor(private readonly file: string) {}

  /** Reads what the API server appended since the last call. */
  async update(): Promise<void> {
    const size = await stat(this.file).then(
      (s) => s.size,
      () => 0,
    );
    if (size <= this.offset) return;
    const handle = await open(this.file, "r");
    try {
      const buffer = Buffer.alloc(size - this.offset);
      await handle.read(buffer, 0, buffer.length, this.offset);
      this.offset = size;
      const lines = (this.pending + buffer.toString("utf8")).split("\n");
      this.pending = lines.pop() ?? "";
      for (const line of lines) {
        if (line.trim() === "") continue;
        const event = JSON.parse(line) as {
          verb?: string;
          stage?: string;
          objectRef?: { resource?: string; subresource?: string };
        };
        if (event.stage !== "ResponseComplete" && event.stage !== "Panic") continue;
        const ref = event.objectRef;
        const resource =
          ref === undefined
            ? "(none)"
            : `${ref.resource ?? ""}${ref.subresource ? `/${ref.subresource}` : ""}`;
        const key = `${event.verb ?? "?"} ${resource}`;
        this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
      }
    } finally {
      await handle.close();
    }
  }

  /** Bytes of the log so far: grows with every audited request (the quiet check). */
  async size(): Promise<number> {
    return stat(this.file).then(
      (s) => s.size,
      () => 0,
    );
  }

  snapshot(): Map<string, number> {
    return new Map(this.counts);
  }
}

/** `after - before`, by key. */
export function countsSince(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [key, n] of after) {
    const d = n - (before.get(key) ?? 0);
    if (d !== 0) delta.set(key, d);
  }
  return delta;
}

export interface FleetWorld {
  readonly namespace: string;
  readonly cnfs: readonly Cnf[];
  readonly fleet: CnfFleet;
  readonly kube: KubeClient;
  readonly functions: ReadonlyMap<string, FunctionProcess>;
  close(): Promise<void>;
}

/**
 * `cnfs` CNFs of two pods (purposes `<prefix>0`, `<prefix>1`, ...) in a new namespace, the two
 * rule functions bundled as the image runs them, and a connector that watches that namespace.
 */
export async function startFleetWorld(
  ctx: BenchContext,
  fp: FleetPlane,
  cnfCount: number,
  workDir: string,
): Promise<FleetWorld> {
  const namespace = `fleet-${cnfCount}`;
  await fp.raw.must("POST", "/api/v1/namespaces", { metadata: { name: namespace } });
  const fleet = new CnfFleet(fp.kube);
  const stops: (() => Promise<unknown>)[] = [() => fleet.close()];
  const close = async (): Promise<void> => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    const cnfs: Cnf[] = [];
    for (let i = 0; i < cnfCount; i += 1) {
      const cnf = await fleet.createCnf(`fleet${i}`, { namespace, pods: 2 });
      await writeDeploymentStatus(fp.kube, cnf, cnf.pods.length);
      cnfs.push(cnf);
    }
    await buildDist();
    const nodeOptions = await dockerfileNodeOptions();
    const nodeArgs = await dockerfileNodeArgs();
    const functions = new Map<string, FunctionProcess>();
    for (const fn of FLEET_FUNCTIONS) {
      const proc = await spawnFunctionServer({
        logFile: path.join(workDir, `${fn}.log`),
        script: DIST_SERVER,
        nodeArgs,
        // As stack.yml ships each function; its own state (prune ledgers, CNF sync Leases) in
        // the fleet's namespace, which stands in for sdewan-prune-ledgers.
        env: {
          KUBECONFIG: fp.plane.user(FUNCTIONS_USER).kubeconfigPath,
          LOG_LEVEL: process.env["SDEWAN_BENCH_PEER_LOG_LEVEL"] ?? "warn",
          NODE_OPTIONS: nodeOptions,
          FUNCTIONS: fn,
          CNF_RESTART_MIN_INTERVAL_MS: "10000",
          PRUNE_LEDGER_NAMESPACE: namespace,
        },
      });
      stops.push(() => proc.stop());
      functions.set(fn, proc);
    }
    for (const [fn, proc] of functions) {
      await waitReady(`${proc.url}/_/ready`, `the ${fn} server`, 120_000);
    }
    const urlOf = (fn: string): string => `${functions.get(fn)?.url ?? ""}/${fn}`;
    const port = await freePort();
    const configFile = path.join(workDir, "connector.yaml");
    await writeFile(
      configFile,
      connectorConfig({
        port,
        namespaces: [namespace],
        // Every CNF of the namespace: the rules and Deployments that carry a purpose.
        selector: PURPOSE_LABEL,
        reconcileUrl: urlOf("reconcile-rule"),
        deploymentUrl: urlOf("on-deployment-ready"),
      }),
    );
    const connector = await startConnector(workDir, configFile, port, {
      KUBECONFIG: fp.plane.kubeconfigPath,
      LOG_LEVEL: "warn",
    });
    stops.push(() => connector.proc.stop());
    // An interrupted bench (Ctrl-C) exits without close(): its children must not outlive it.
    const killOnExit = (): void => {
      for (const proc of [...functions.values(), connector.proc]) proc.child.kill("SIGKILL");
    };
    process.once("exit", killOnExit);
    stops.unshift(() => Promise.resolve(process.off("exit", killOnExit)));
    return { namespace, cnfs, fleet, kube: fp.kube, functions, close };
  } catch (error) {
    await close();
    throw error;
  }
}
