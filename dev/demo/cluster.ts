// The demo's objects on the local API server: CNF cnf-1 (Deployment, ReplicaSet, two Pods whose
// status says Ready at the simulators' addresses, as a kubelet would write it), a shop namespace
// with web Pods for the sample Egress, the samples themselves, and the convergence check.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import type { CnfSim } from "../cnf-sim/index.js";
import { repoRoot } from "../control-plane/binaries.js";
import { CNF_PORT_ANNOTATION } from "../../shared/cnf/index.js";
import {
  DEPLOYMENTS,
  EGRESSES,
  EGRESS_GROUPS,
  NAMESPACES,
  PODS,
  REPLICA_SETS,
  createKubeClient,
  ruleResource,
  type KubeClient,
  type ResourceType,
} from "../../shared/kube/index.js";
import { ALL_RULE_KINDS, isRuleKind, requireKind } from "../../shared/rules/index.js";

export interface RuleRow {
  readonly rule: string;
  readonly inSync: boolean | undefined;
  readonly holding: number;
  readonly pods: number;
}

interface SampleDoc {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

const CNF = "cnf-1";
const HASH = "5d8c7f9b4";
const SHOP_SELECTOR = { team: "shop" };

async function samplesOf(file: string): Promise<SampleDoc[]> {
  const text = await readFile(path.join(repoRoot, "manifests/samples", file), "utf8");
  return parseAllDocuments(text)
    .map((d) => d.toJS() as SampleDoc | null)
    .filter((d): d is SampleDoc => d !== null);
}

export class DemoCluster {
  readonly kube: KubeClient;

  constructor(
    kubeconfigPath: string,
    private readonly sims: readonly CnfSim[],
    private readonly simPort: number,
  ) {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    this.kube = createKubeClient(kc);
  }

  async createNamespace(name: string, labels: Record<string, string> = {}): Promise<void> {
    await this.kube.create(NAMESPACES, { metadata: { name, labels } });
  }

  /** manifests/samples/cnf-deployment.yaml, served by the simulators: one Ready Pod per sim. */
  async createCnf(namespace: string): Promise<void> {
    const [sample] = await samplesOf("cnf-deployment.yaml");
    if (sample === undefined) throw new Error("manifests/samples/cnf-deployment.yaml is empty");
    const annotations = { [CNF_PORT_ANNOTATION]: String(this.simPort) };
    const deployment = await this.kube.create(DEPLOYMENTS, {
      ...sample,
      metadata: { ...sample.metadata, namespace, annotations },
    });
    const podLabels = { app: CNF, sdewanPurpose: CNF, "pod-template-hash": HASH };
    const owner = (kind: string, name: string, uid: string) => [
      { apiVersion: "apps/v1", kind, name, uid, controller: true },
    ];
    const template = sample["spec"] as { template: { spec: unknown } };
    const rs = await this.kube.create(REPLICA_SETS, {
      metadata: {
        name: `${CNF}-${HASH}`,
        namespace,
        labels: podLabels,
        ownerReferences: owner("Deployment", CNF, deployment.metadata.uid ?? ""),
      },
      spec: {
        replicas: this.sims.length,
        selector: { matchLabels: podLabels },
        template: { metadata: { labels: podLabels }, spec: template.template.spec },
      },
    });
    for (const [i, sim] of this.sims.entries()) {
      const name = `${CNF}-${HASH}-pod${i}`;
      await this.kube.create(PODS, {
        metadata: {
          name,
          namespace,
          labels: podLabels,
          ownerReferences: owner("ReplicaSet", `${CNF}-${HASH}`, rs.metadata.uid ?? ""),
        },
        spec: { nodeName: "node-1", containers: [{ name: "sdewan", image: "openwrt:demo" }] },
      });
      await this.setPodReady(namespace, name, sim.host);
    }
  }

  private async setPodReady(namespace: string, name: string, ip: string, ready = true) {
    const condition = {
      type: "Ready",
      status: ready ? "True" : "False",
      lastTransitionTime: new Date().toISOString(),
    };
    await this.kube.patchStatus(
      PODS,
      { namespace, name },
      { phase: "Running", podIP: ip, podIPs: [{ ip }], conditions: [condition] },
    );
  }

  /** The namespace the sample Egress selects (team=shop), with two running web Pods. */
  async createShop(namespace: string): Promise<void> {
    const shop = `${namespace}-shop`;
    await this.createNamespace(shop, SHOP_SELECTOR);
    for (const [i, ip] of ["10.244.1.10", "10.244.2.11"].entries()) {
      const name = `web-${i}`;
      await this.kube.create(PODS, {
        metadata: { name, namespace: shop, labels: { app: "web" } },
        spec: { nodeName: `node-${i + 1}`, containers: [{ name: "web", image: "web:demo" }] },
      });
      await this.kube.patchStatus(
        PODS,
        { namespace: shop, name },
        { phase: "Running", podIP: ip, podIPs: [{ ip }] },
      );
    }
  }

  /**
   * Creates every object of `files` (rules into `namespace`) in the registry's apply order, so
   * the webhook's dependency checks find what each rule references; returns how many.
   */
  async applySamples(namespace: string, files: readonly string[]): Promise<number> {
    const docs = (await Promise.all(files.map(samplesOf))).flat();
    const rank = (doc: SampleDoc) => (isRuleKind(doc.kind) ? requireKind(doc.kind).applyRank : -1);
    docs.sort((a, b) => rank(a) - rank(b));
    for (const doc of docs) {
      const type = this.typeOf(doc.kind);
      const metadata = type.namespaced ? { ...doc.metadata, namespace } : doc.metadata;
      await this.kube.create(type, { ...doc, metadata });
    }
    return docs.length;
  }

  /** Tries to create a rule that references a policy nobody made; returns the API's answer. */
  async createDanglingRule(namespace: string): Promise<string> {
    try {
      await this.kube.create(ruleResource(requireKind("Mwan3Rule")), {
        metadata: { name: "dangling", namespace, labels: { sdewanPurpose: CNF } },
        spec: { policy: "no-such-policy", src_ip: "10.0.9.9" },
      });
      return "created (no webhook denied it)";
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  /**
   * A CNF container restart as the kubelet reports it: the pod turns not Ready, the CNF comes
   * back empty (the simulator drops its state), the pod turns Ready again.
   */
  async restartCnfPod(namespace: string, index: number): Promise<void> {
    const sim = this.sims[index];
    if (sim === undefined) throw new Error(`no CNF pod ${index}`);
    const name = `${CNF}-${HASH}-pod${index}`;
    await this.setPodReady(namespace, name, sim.host, false);
    sim.restartCnf();
    await this.setPodReady(namespace, name, sim.host, true);
  }

  private typeOf(kind: string): ResourceType {
    if (isRuleKind(kind)) return ruleResource(requireKind(kind));
    if (kind === EGRESSES.kind) return EGRESSES;
    throw new Error(`the demo does not know how to apply a sample of kind ${kind}`);
  }

  /** Every rule of the namespace: inSync, and how many simulators hold its object. */
  async rules(namespace: string): Promise<RuleRow[]> {
    const rows: RuleRow[] = [];
    for (const entry of ALL_RULE_KINDS) {
      const collection = `${entry.cnf.module}/${entry.cnf.collection}`;
      for (const rule of await this.kube.list(ruleResource(entry), { namespace })) {
        const status = (rule as { status?: { inSync?: boolean } }).status;
        const holding = this.sims.filter((sim) =>
          (sim.state().collections[collection] ?? []).some((o) => o["name"] === rule.metadata.name),
        ).length;
        const name = `${entry.kind}/${rule.metadata.name}`;
        rows.push({ rule: name, inSync: status?.inSync, holding, pods: this.sims.length });
      }
    }
    return rows;
  }

  /** "EgressGroup <name>: <n> members" for every Egress; undefined while one has no group. */
  async groups(): Promise<string[] | undefined> {
    const lines: string[] = [];
    for (const egress of await this.kube.list(EGRESSES)) {
      const group = await this.kube.get(EGRESS_GROUPS, { name: egress.metadata.name });
      const members = (group as { status?: { members?: unknown[] } } | undefined)?.status?.members;
      if (members === undefined || members.length === 0) return undefined;
      lines.push(`EgressGroup ${egress.metadata.name}: ${members.length} members`);
    }
    return lines;
  }

  /** Polls until every rule is inSync on every pod and every Egress has its group. */
  async waitConverged(
    namespace: string,
    timeoutMs: number,
    progress: (pending: string) => void,
  ): Promise<{ rows: RuleRow[]; groups: string[] }> {
    const deadline = Date.now() + timeoutMs;
    let lastReport = Date.now();
    for (;;) {
      const rows = await this.rules(namespace);
      const groups = await this.groups();
      const pending = rows.filter((r) => r.inSync !== true || r.holding < r.pods);
      if (rows.length > 0 && pending.length === 0 && groups !== undefined) return { rows, groups };
      const what = `${pending.length}/${rows.length} rules not in sync${groups ? "" : ", EgressGroup not written"}`;
      if (Date.now() > deadline) {
        throw new Error(
          `not converged after ${timeoutMs / 1000} s: ${what} (${pending.map((r) => r.rule).join(", ")})`,
        );
      }
      if (Date.now() - lastReport > 5_000) {
        progress(what);
        lastReport = Date.now();
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
