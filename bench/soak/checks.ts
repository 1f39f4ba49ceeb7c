/**
 * The soak's end-state checks, each reading live state (API server, simulators, logs) and
 * computing what should be there without the functions' code: every CNF pod holds exactly its
 * rules (names and content), every rule's status is true for its generation, no rule is stuck
 * with a finalizer, every EgressGroup equals a fresh computation, and no log shows a crash.
 */
import { readFile } from "node:fs/promises";
import type { RawApi } from "../lib/raw-api.js";
import type { Cnf } from "../../dev/world/index.js";
import {
  RULE_KIND_NAMES,
  networkMapOfDeployment,
  requireKind,
  type DeploymentWithTemplateAnnotations,
  type RuleStatus,
} from "../../shared/kinds/index.js";

interface RuleObject {
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly generation?: number;
    readonly labels?: Record<string, string>;
    readonly deletionTimestamp?: string;
    readonly finalizers?: string[];
  };
  readonly spec: Record<string, unknown>;
  readonly status?: RuleStatus;
}

async function getJson<T>(raw: RawApi, path: string): Promise<T> {
  const reply = await raw.must("GET", path);
  return JSON.parse(reply.body) as T;
}

async function rulesOf(raw: RawApi, namespace: string): Promise<RuleObject[]> {
  const lists = await Promise.all(
    RULE_KIND_NAMES.map(async (kind) => {
      const list = await getJson<{ items: RuleObject[] }>(
        raw,
        `/apis/batch.sdewan.akraino.org/v1alpha1/namespaces/${namespace}/${requireKind(kind).plural}`,
      );
      return list.items.map((item) => ({ ...item, kind }));
    }),
  );
  return lists.flat();
}

/** An object a pod holds that no rule declares, or a rule's object a pod lacks. */
export interface Discrepancy {
  readonly podIp: string;
  readonly collection: string;
  readonly name: string;
  readonly kind: "extra" | "missing";
}

/** Pod holdings: per collection, what the CNF holds vs what the rules of its CNF say. */
export async function checkCnfs(
  raw: RawApi,
  cnfs: readonly Cnf[],
  discrepancies: Discrepancy[] = [],
): Promise<string[]> {
  const problems: string[] = [];
  for (const cnf of cnfs) {
    const deployment = await getJson<DeploymentWithTemplateAnnotations>(
      raw,
      `/apis/apps/v1/namespaces/${cnf.namespace}/deployments/${cnf.name}`,
    );
    const networks = networkMapOfDeployment(deployment);
    const rules = (await rulesOf(raw, cnf.namespace)).filter(
      (r) =>
        r.metadata.labels?.["sdewanPurpose"] === cnf.purpose &&
        r.metadata.deletionTimestamp === undefined,
    );
    cnf.pods.forEach((pod, index) => {
      const state = pod.sim.state().collections;
      // Kinds may share a collection (SNAT/DNAT, IpsecSite/IpsecHost): compare per collection.
      const collections = new Map<string, RuleObject[]>();
      for (const kind of RULE_KIND_NAMES) {
        const { module, collection } = requireKind(kind).cnf;
        const key = `${module}/${collection}`;
        collections.set(key, [
          ...(collections.get(key) ?? []),
          ...rules.filter((r) => r.kind === kind),
        ]);
      }
      for (const [collection, wanted] of collections) {
        const held = state[collection] ?? [];
        const heldNames = held.map((o) => String(o["name"])).sort();
        const wantedNames = wanted
          .map((r) => requireKind(r.kind).cnfObjectName(r.metadata.name))
          .sort();
        const where = `${cnf.namespace}/${cnf.name} pod ${index} ${collection}`;
        if (heldNames.join(",") !== wantedNames.join(",")) {
          problems.push(
            `${where}: holds [${heldNames.join(", ")}], rules are [${wantedNames.join(", ")}]`,
          );
          for (const name of heldNames.filter((n) => !wantedNames.includes(n))) {
            discrepancies.push({ podIp: pod.ip, collection, name, kind: "extra" });
          }
          for (const name of wantedNames.filter((n) => !heldNames.includes(n))) {
            discrepancies.push({ podIp: pod.ip, collection, name, kind: "missing" });
          }
          continue;
        }
        for (const rule of wanted) {
          const entry = requireKind(rule.kind);
          const actual = held.find((o) => o["name"] === entry.cnfObjectName(rule.metadata.name));
          const desired = entry.toCnf(rule, { networks });
          if (!entry.cnfEqual(desired, actual)) {
            problems.push(
              `${where} ${rule.metadata.name}: differs in ${entry.cnfDiff(desired, actual).join(", ")}`,
            );
          }
        }
      }
    });
  }
  return problems;
}

/** Every rule of the namespaces: status true for its generation, and not stuck while deleting. */
export async function checkRuleStatuses(
  raw: RawApi,
  namespaces: readonly string[],
): Promise<string[]> {
  const problems: string[] = [];
  for (const namespace of namespaces) {
    for (const rule of await rulesOf(raw, namespace)) {
      const name = `${rule.kind} ${namespace}/${rule.metadata.name}`;
      if (rule.metadata.deletionTimestamp !== undefined) {
        problems.push(
          `${name}: stuck deleting with finalizers ${JSON.stringify(rule.metadata.finalizers)}`,
        );
        continue;
      }
      const status = rule.status;
      if (status?.inSync !== true || status.appliedGeneration !== rule.metadata.generation) {
        const condition = status?.conditions?.[0];
        problems.push(
          `${name}: inSync ${String(status?.inSync)}, applied generation ${String(status?.appliedGeneration)} of ${String(rule.metadata.generation)}` +
            (condition ? ` (${condition.type} ${condition.reason}: ${condition.message})` : ""),
        );
      }
    }
  }
  return problems;
}

interface Selector {
  readonly matchLabels?: Record<string, string>;
  readonly matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** Label selector semantics, written here independently of shared/egress. */
export function selectorMatches(selector: Selector, labels: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  return (selector.matchExpressions ?? []).every((e) => {
    const has = Object.hasOwn(labels, e.key);
    const value = labels[e.key] ?? "";
    switch (e.operator) {
      case "In":
        return has && (e.values ?? []).includes(value);
      case "NotIn":
        return !has || !(e.values ?? []).includes(value);
      case "Exists":
        return has;
      case "DoesNotExist":
        return !has;
      default:
        return false;
    }
  });
}

interface PodObject {
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  spec?: { nodeName?: string; hostNetwork?: boolean };
  status?: { phase?: string; podIP?: string; podIPs?: { ip: string }[] };
}

interface EgressObject {
  metadata: { name: string };
  spec: { appliedTo: { podSelector?: Selector; namespaceSelector?: Selector } };
}

interface GroupObject {
  metadata: { name: string };
  status?: { members?: { pod: { name: string; namespace: string }; ips?: string[] }[] };
}

/** Every EgressGroup against members computed here from Egresses, Pods and Namespaces. */
export async function checkEgressGroups(raw: RawApi): Promise<string[]> {
  const [egresses, groups, pods, namespaces] = await Promise.all([
    getJson<{ items: EgressObject[] }>(raw, "/apis/crd.antrea.io/v1beta1/egresses"),
    getJson<{ items: GroupObject[] }>(raw, "/apis/sdewan.akraino.org/v1alpha1/egressgroups"),
    getJson<{ items: PodObject[] }>(raw, "/api/v1/pods"),
    getJson<{ items: { metadata: { name: string; labels?: Record<string, string> } }[] }>(
      raw,
      "/api/v1/namespaces",
    ),
  ]);
  const nsLabels = new Map(namespaces.items.map((n) => [n.metadata.name, n.metadata.labels ?? {}]));
  const eligible = pods.items.filter(
    (p) =>
      (p.spec?.nodeName ?? "") !== "" &&
      p.spec?.hostNetwork !== true &&
      p.status?.phase !== "Succeeded" &&
      p.status?.phase !== "Failed",
  );
  const problems: string[] = [];
  const byName = new Map(groups.items.map((g) => [g.metadata.name, g]));
  for (const egress of egresses.items) {
    const { podSelector, namespaceSelector } = egress.spec.appliedTo;
    const want = eligible
      .filter(
        (p) =>
          (podSelector !== undefined || namespaceSelector !== undefined) &&
          (podSelector === undefined || selectorMatches(podSelector, p.metadata.labels ?? {})) &&
          (namespaceSelector === undefined ||
            selectorMatches(namespaceSelector, nsLabels.get(p.metadata.namespace) ?? {})),
      )
      .map((p) => {
        const ips = (p.status?.podIPs ?? []).map((x) => x.ip);
        const all = ips.length > 0 ? ips : p.status?.podIP ? [p.status.podIP] : [];
        return `${p.metadata.namespace}/${p.metadata.name}=${all.join(",")}`;
      })
      .sort();
    const group = byName.get(egress.metadata.name);
    const has = (group?.status?.members ?? [])
      .map((m) => `${m.pod.namespace}/${m.pod.name}=${(m.ips ?? []).join(",")}`)
      .sort();
    if (want.join(" ") !== has.join(" ")) {
      const missing = want.filter((w) => !has.includes(w));
      const extra = has.filter((h) => !want.includes(h));
      problems.push(
        `EgressGroup ${egress.metadata.name}${group ? "" : " (absent)"}: missing [${missing.slice(0, 4).join(" ")}], extra [${extra.slice(0, 4).join(" ")}]`,
      );
    }
  }
  const names = new Set(egresses.items.map((e) => e.metadata.name));
  for (const group of groups.items) {
    if (!names.has(group.metadata.name))
      problems.push(`EgressGroup ${group.metadata.name} has no Egress`);
  }
  return problems;
}

/** Lines of a process log that show a crash, an unhandled rejection or a handler that threw. */
export async function logProblems(file: string): Promise<string[]> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((line) => /unhandled|uncaught|"level":"fatal"|"errorId"|"outcome":"error"/i.test(line))
    .map((line) => `${file.split("/").at(-1)}: ${line.slice(0, 300)}`);
}
