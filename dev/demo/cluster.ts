// The demo's objects on the local API server: CNF cnf-1 (manifests/samples/cnf-deployment.yaml
// with two Ready pods served by simulators, from dev/world), a shop namespace with web Pods for
// the sample Egress, the samples themselves, and the convergence check.
import { KubeConfig } from "@kubernetes/client-node";
import { CnfFleet, sampleDocuments, type Cnf, type SampleDocument } from "../world/index.js";
import {
  EGRESSES,
  EGRESS_GROUPS,
  NAMESPACES,
  NETWORK_POLICIES,
  PODS,
  createKubeClient,
  ruleResource,
  type KubeClient,
  type ResourceType,
} from "../../shared/kube/index.js";
import { ALL_RULE_KINDS, isRuleKind, requireKind } from "../../shared/kinds/index.js";

export interface RuleRow {
  readonly rule: string;
  readonly inSync: boolean | undefined;
  readonly holding: number;
  readonly pods: number;
}

const CNF = "cnf-1";
const SHOP_SELECTOR = { team: "shop" };

export class DemoCluster {
  readonly kube: KubeClient;
  readonly fleet: CnfFleet;
  private cnf: Cnf | undefined;

  constructor(kubeconfigPath: string) {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    this.kube = createKubeClient(kc);
    this.fleet = new CnfFleet(this.kube);
  }

  async createNamespace(name: string, labels: Record<string, string> = {}): Promise<void> {
    await this.kube.create(NAMESPACES, { metadata: { name, labels } });
  }

  /** manifests/samples/cnf-deployment.yaml with two Ready pods, each served by a simulator. */
  async createCnf(namespace: string): Promise<Cnf> {
    const [deployment] = sampleDocuments("cnf-deployment.yaml");
    if (deployment === undefined) throw new Error("manifests/samples/cnf-deployment.yaml is empty");
    this.cnf = await this.fleet.createCnf(CNF, { namespace, deployment, pods: 2 });
    return this.cnf;
  }

  /** The pods of cnf-1 (none before createCnf). */
  get pods(): Cnf["pods"] {
    return this.cnf?.pods ?? [];
  }

  /** The namespace the sample Egress selects (team=shop), with two running web Pods. */
  async createShop(namespace: string): Promise<void> {
    const shop = `${namespace}-shop`;
    await this.createNamespace(shop, SHOP_SELECTOR);
    // Pod IPs from the recipe's pod range (100.64.0.0/16): data only, nothing routes them.
    for (const [i, ip] of ["100.64.1.10", "100.64.2.11"].entries()) {
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

  async createNetworkPolicy(namespace: string, name: string, spec: object): Promise<void> {
    await this.kube.create(NETWORK_POLICIES, { metadata: { name, namespace }, spec });
  }

  /**
   * Creates every object of `files` (rules into `namespace`) in the registry's apply order, so
   * the webhook's dependency checks find what each rule references; returns how many.
   */
  async applySamples(namespace: string, files: readonly string[]): Promise<number> {
    const docs = files.flatMap(sampleDocuments);
    const rank = (doc: SampleDocument) =>
      isRuleKind(doc.kind) ? requireKind(doc.kind).applyRank : -1;
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
        spec: { policy: "no-such-policy", src_ip: "192.0.2.9" },
      });
      return "created (no webhook denied it)";
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  /** A container restart of pod `index` of cnf-1: its CNF comes back empty, not Ready, Ready. */
  async restartCnfPod(index: number): Promise<void> {
    const pod = this.pods[index];
    if (pod === undefined) throw new Error(`no CNF pod ${index}`);
    await this.fleet.restartPod(pod);
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
        const held = this.cnf === undefined ? [] : this.fleet.held(this.cnf, collection);
        const onCnf = entry.cnfObjectName(rule.metadata.name);
        const holding = held.filter((names) => names.includes(onCnf)).length;
        const name = `${entry.kind}/${rule.metadata.name}`;
        rows.push({ rule: name, inSync: status?.inSync, holding, pods: this.pods.length });
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

  /** Stops the simulators; the API objects stay. */
  close(): Promise<void> {
    return this.fleet.close();
  }
}
