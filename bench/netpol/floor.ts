/**
 * The floor under the netpol-store row: the tables the function stored, created again under other
 * names by a plain client (no logic, no reads), peer sets first and then endpoint tables, as many
 * in flight as the function keeps: what the API server and etcd take for the same objects.
 */
import pLimit from "p-limit";
import { planeCpuMeter } from "../lib/plane-cpu.js";
import type { RawApi } from "../lib/raw-api.js";

interface Listed {
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
    readonly ownerReferences?: unknown[];
  };
  readonly [field: string]: unknown;
}

export interface FloorOptions {
  /** Requests in flight. */
  readonly concurrency: number;
  /** Appended to each name, so the copies sit beside the function's tables. */
  readonly suffix: string;
}

const GROUP = "/apis/netpol.sdewan.akraino.org/v1alpha1";

/** The same object to create: our metadata only, renamed. */
function copyOf(item: Listed, options: FloorOptions): Record<string, unknown> {
  const { metadata, apiVersion, kind, spec, status } = item;
  return {
    apiVersion,
    kind,
    metadata: {
      name: `${metadata.name}${options.suffix}`,
      ...(metadata.labels ? { labels: metadata.labels } : {}),
      ...(metadata.annotations ? { annotations: metadata.annotations } : {}),
      ...(metadata.ownerReferences ? { ownerReferences: metadata.ownerReferences } : {}),
    },
    spec,
    status,
  };
}

export interface FloorCost {
  readonly ms: number;
  readonly peerSetMs: number;
  /** CPU the API server and etcd spent, in all and on the peer sets. */
  readonly cpuMs: number;
  readonly peerSetCpuMs: number;
}

/** What creating copies of `peerSets` then `endpoints` (the list bodies as read) costs. */
export async function createFloor(
  raw: RawApi,
  planeDir: string,
  peerSets: string,
  endpoints: string,
  options: FloorOptions,
): Promise<FloorCost> {
  const limit = pLimit(options.concurrency);
  const createAll = (body: string, plural: string) =>
    Promise.all(
      (JSON.parse(body) as { items: Listed[] }).items.map((item) =>
        limit(() =>
          raw.must(
            "POST",
            `${GROUP}/namespaces/${item.metadata.namespace}/${plural}`,
            copyOf(item, options),
          ),
        ),
      ),
    );
  const cpu = await planeCpuMeter(planeDir);
  const started = performance.now();
  await createAll(peerSets, "networkpolicypeersets");
  const peerSetMs = performance.now() - started;
  const peerSetCpuMs = await cpu();
  await createAll(endpoints, "networkpolicyendpoints");
  return { ms: performance.now() - started, peerSetMs, cpuMs: await cpu(), peerSetCpuMs };
}
