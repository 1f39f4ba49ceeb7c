// The world of the egress integration tests: Namespaces, Pods (with the status a kubelet would
// write) and Antrea Egresses on the real API server, the egress-group-sync handler called
// directly, and readers for the EgressGroups it writes. Every name and label carries a per-file
// run id, because Egresses and EgressGroups are cluster-scoped and test files run in parallel.
import { randomBytes } from "node:crypto";
import { CoreV1Api } from "@kubernetes/client-node";
import { createEgressGroupSync } from "../../functions/egress-group-sync/index.js";
import type { AppliedTo } from "../../shared/egress/membership.js";
import type { GroupLimits } from "../../shared/egress/size.js";
import type { IntakeEvent, ObjectRef, WatchAction } from "../../shared/events/types.js";
import {
  createKubeClient,
  EGRESSES,
  EGRESS_GROUPS,
  NAMESPACES,
  PODS,
  type KubeClient,
} from "../../shared/kube/index.js";
import type { EgressGroup } from "../../shared/kinds/index.js";
import type { EventFunction, HandlerContext } from "../../shared/runtime/function.js";
import type { Outcome } from "../../shared/core/outcome.js";
import { adminKubeConfig } from "./support/cluster.js";

export const RUN_LABEL = "egress.sdewan.test/run";

export interface PodOptions {
  readonly nodeName?: string;
  readonly hostNetwork?: boolean;
  readonly phase?: string;
  /** Pod IPs written to status; [] leaves the Pod without an IP. */
  readonly ips?: readonly string[];
  /** false: leave status as the API server made it (Pending, no IP), saving one request. */
  readonly writeStatus?: boolean;
}

const silentLog = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

export class EgressWorld {
  readonly run = randomBytes(3).toString("hex");
  readonly kube: KubeClient = createKubeClient(adminKubeConfig());
  readonly core = adminKubeConfig().makeApiClient(CoreV1Api);
  readonly fn: EventFunction;
  /** API requests the handler made, summed over every call since the last reset. */
  readonly calls = { api: 0, cnf: 0 };

  constructor(options: { limits?: GroupLimits; kube?: KubeClient } = {}) {
    const kube = options.kube ?? createKubeClient(adminKubeConfig());
    this.fn = createEgressGroupSync({
      kube: () => kube,
      ...(options.limits === undefined ? {} : { limits: options.limits }),
    });
  }

  /** A unique, DNS-safe name for this run: `<base>-<run>`. */
  name(base: string): string {
    return `${base}-${this.run}`;
  }

  /** The run label plus `labels`: selectors that include the run label only see this file's Pods. */
  labels(labels: Record<string, string> = {}): Record<string, string> {
    return { [RUN_LABEL]: this.run, ...labels };
  }

  async namespace(base: string, labels: Record<string, string> = {}): Promise<string> {
    const name = this.name(base);
    await this.kube.create(NAMESPACES, { metadata: { name, labels: this.labels(labels) } });
    return name;
  }

  async relabelNamespace(name: string, labels: Record<string, string | null>): Promise<void> {
    await this.kube.mergePatch(NAMESPACES, { name }, { metadata: { labels } });
  }

  async pod(
    namespace: string,
    name: string,
    labels: Record<string, string>,
    options: PodOptions = {},
  ): Promise<void> {
    const spec = {
      containers: [{ name: "app", image: "example.invalid/app:1" }],
      ...(options.nodeName === "" ? {} : { nodeName: options.nodeName ?? "node-1" }),
      ...(options.hostNetwork ? { hostNetwork: true } : {}),
    };
    await this.kube.create(PODS, {
      metadata: { name, namespace, labels: this.labels(labels) },
      spec,
    });
    if (options.writeStatus === false) return;
    await this.setPodStatus(
      namespace,
      name,
      options.phase ?? "Running",
      options.ips ?? ["100.64.1.1"],
    );
  }

  async setPodStatus(namespace: string, name: string, phase: string, ips: readonly string[]) {
    const addresses = ips.length === 0 ? {} : { podIP: ips[0], podIPs: ips.map((ip) => ({ ip })) };
    await this.kube.patchStatus(PODS, { namespace, name }, { phase, ...addresses });
  }

  async relabelPod(namespace: string, name: string, labels: Record<string, string | null>) {
    await this.kube.mergePatch(PODS, { namespace, name }, { metadata: { labels } });
  }

  /** Deleted at once: without a kubelet a graceful delete of a scheduled Pod never finishes. */
  async deletePod(namespace: string, name: string): Promise<void> {
    await this.core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 });
  }

  async egress(name: string, appliedTo: AppliedTo): Promise<void> {
    await this.kube.create(EGRESSES, {
      metadata: { name },
      spec: { appliedTo, egressIP: "192.0.2.10" },
    });
  }

  async updateEgress(name: string, appliedTo: AppliedTo): Promise<void> {
    const current = await this.kube.get(EGRESSES, { name });
    if (current === undefined) throw new Error(`Egress ${name} not found`);
    const spec = { ...(current.spec as Record<string, unknown>), appliedTo };
    await this.kube.replace(EGRESSES, { ...current, spec });
  }

  async deleteEgress(name: string): Promise<void> {
    await this.kube.delete(EGRESSES, { name });
  }

  async group(name: string): Promise<EgressGroup | undefined> {
    return (await this.kube.get(EGRESS_GROUPS, { name })) as EgressGroup | undefined;
  }

  /** "namespace/name" of every member of the group, in the group's order; undefined if no group. */
  async members(name: string): Promise<string[] | undefined> {
    const group = await this.group(name);
    return group?.status?.members.map((m) => `${m.pod.namespace}/${m.pod.name}`);
  }

  async send(event: IntakeEvent): Promise<Outcome> {
    const ctx: HandlerContext = {
      correlationId: event.id,
      log: silentLog,
      calls: this.calls,
      signal: new AbortController().signal,
    };
    return this.fn.handle(event, ctx);
  }

  podEvent(namespace: string, name: string, action: WatchAction = "update"): Promise<Outcome> {
    return this.send(objectEvent(action, { apiVersion: "v1", kind: "Pod", namespace, name }));
  }

  namespaceEvent(name: string, action: WatchAction = "update"): Promise<Outcome> {
    return this.send(
      objectEvent(action, { apiVersion: "v1", kind: "Namespace", namespace: "", name }),
    );
  }

  egressEvent(name: string, action: WatchAction = "update"): Promise<Outcome> {
    const ref = { apiVersion: "crd.antrea.io/v1beta1", kind: "Egress", namespace: "", name };
    return this.send(objectEvent(action, ref));
  }

  resync(): Promise<Outcome> {
    return this.send({ type: "resync", id: `resync-${randomBytes(4).toString("hex")}`, scope: {} });
  }
}

export function objectEvent(action: WatchAction, ref: ObjectRef): IntakeEvent {
  return { type: "object", id: `e-${randomBytes(4).toString("hex")}`, action, ref };
}
