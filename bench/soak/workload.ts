/**
 * The soak's random workload: rule creates, updates and deletes on every CNF (a rule is created
 * only once what it references exists, and deleted only when nothing references it, so the end
 * state is always appliable), and Pod / Namespace / Egress churn for egress-group-sync. The model
 * here only chooses operations; the end-state checks read the API server, never this model.
 */
import { podAddress } from "../../dev/control-plane/addresses.js";
import {
  RULE_API_VERSION,
  exampleRules,
  requireKind,
  type RuleKindName,
} from "../../shared/kinds/index.js";
import type { RawApi } from "../lib/raw-api.js";
import type { GeneratedRule } from "../lib/rules.js";
import type { Random } from "./random.js";

export const EGRESS_RUN_LABEL = "soak.sdewan/egress";

export interface RuleHome {
  readonly namespace: string;
  readonly purpose: string;
}

export interface WorkloadCounts {
  ruleCreates: number;
  ruleUpdates: number;
  ruleDeletes: number;
  podCreates: number;
  podDeletes: number;
  podRelabels: number;
  egressCreates: number;
  egressUpdates: number;
  egressDeletes: number;
  namespaceRelabels: number;
  /** Operations the API server refused (e.g. a name still terminating): expected, not errors. */
  refused: number;
}

const plural = (kind: RuleKindName): string => requireKind(kind).plural;
const rulePath = (ns: string, kind: RuleKindName, name?: string): string =>
  `/apis/batch.sdewan.akraino.org/v1alpha1/namespaces/${ns}/${plural(kind)}${name === undefined ? "" : `/${name}`}`;

/**
 * How a rule of `kind` can change (its registry example: valid, references kept), or undefined
 * when the kind declares no such change. requireKind throws on a kind the registry lacks.
 */
const changeOf = (kind: RuleKindName) => requireKind(kind).example.change;

interface Slot {
  readonly home: RuleHome;
  readonly rule: GeneratedRule;
  readonly references: readonly string[];
  exists: boolean;
}

const slotKey = (home: RuleHome, kind: string, name: string): string =>
  `${home.namespace}/${home.purpose}/${kind}/${name}`;

export class Workload {
  readonly counts: WorkloadCounts = {
    ruleCreates: 0,
    ruleUpdates: 0,
    ruleDeletes: 0,
    podCreates: 0,
    podDeletes: 0,
    podRelabels: 0,
    egressCreates: 0,
    egressUpdates: 0,
    egressDeletes: 0,
    namespaceRelabels: 0,
    refused: 0,
  };
  private readonly slots: Slot[];
  private readonly pods = new Set<string>();
  private readonly egresses = new Set<string>();
  private podSeq = 0;

  private readonly raw: RawApi;
  private readonly random: Random;
  private readonly egressNamespaces: readonly string[];
  private readonly run: string;

  constructor(options: {
    raw: RawApi;
    random: Random;
    /** Where rules go: each CNF's namespace and purpose. */
    homes: readonly RuleHome[];
    egressNamespaces: readonly string[];
    /** The label value that marks this soak's Pods, Namespaces and Egress selectors. */
    run: string;
    rulesPerHome?: number;
  }) {
    this.raw = options.raw;
    this.random = options.random;
    this.egressNamespaces = options.egressNamespaces;
    this.run = options.run;
    // Rule names are unique per namespace and kind: each purpose of a namespace gets a prefix.
    this.slots = options.homes.flatMap((home) =>
      exampleRules(options.rulesPerHome ?? 22, namePrefix(home.purpose)).map((rule) => {
        const references = requireKind(rule.kind)
          .references(rule.spec)
          .map((r) => slotKey(home, r.kind, r.name));
        return { home, rule, references, exists: false };
      }),
    );
  }

  /** One random operation; API refusals are counted, other failures thrown. */
  async step(): Promise<void> {
    const roll = this.random.next();
    if (roll < 0.65) await this.ruleStep();
    else if (roll < 0.9) await this.podStep();
    else await this.egressStep();
  }

  private async ruleStep(): Promise<void> {
    const existing = this.slots.filter((s) => s.exists);
    const roll = this.random.next();
    if (roll < 0.45 || existing.length === 0) {
      const live = new Set(existing.map((s) => slotKey(s.home, s.rule.kind, s.rule.name)));
      const creatable = this.slots.filter(
        (s) => !s.exists && s.references.every((r) => live.has(r)),
      );
      const slot = this.random.pick(creatable);
      if (slot === undefined) return;
      const { home, rule } = slot;
      const ok = await this.send("POST", rulePath(home.namespace, rule.kind), {
        apiVersion: RULE_API_VERSION,
        kind: rule.kind,
        metadata: { name: rule.name, labels: { sdewanPurpose: home.purpose } },
        spec: rule.spec,
      });
      if (ok) {
        slot.exists = true;
        this.counts.ruleCreates += 1;
      }
    } else if (roll < 0.8) {
      const slot = this.random.pick(existing.filter((s) => changeOf(s.rule.kind) !== undefined));
      const change = slot && changeOf(slot.rule.kind);
      if (slot === undefined || change === undefined) return;
      if (
        await this.patch(rulePath(slot.home.namespace, slot.rule.kind, slot.rule.name), {
          spec: change(this.random.int(1_000_000)),
        })
      ) {
        this.counts.ruleUpdates += 1;
      }
    } else {
      const referenced = new Set(existing.flatMap((s) => s.references));
      const deletable = existing.filter(
        (s) => !referenced.has(slotKey(s.home, s.rule.kind, s.rule.name)),
      );
      const slot = this.random.pick(deletable);
      if (slot === undefined) return;
      await this.send("DELETE", rulePath(slot.home.namespace, slot.rule.kind, slot.rule.name));
      slot.exists = false;
      this.counts.ruleDeletes += 1;
    }
  }

  private async podStep(): Promise<void> {
    const roll = this.random.next();
    const existing = [...this.pods];
    if (roll < 0.4 || existing.length < 5) {
      const namespace = this.random.pick(this.egressNamespaces) ?? "";
      const name = `p${this.podSeq++}`;
      const base = `/api/v1/namespaces/${namespace}/pods`;
      const created = await this.send("POST", base, {
        metadata: { name, labels: { [EGRESS_RUN_LABEL]: this.run, app: `a${this.random.int(4)}` } },
        spec: { nodeName: "node-1", containers: [{ name: "app", image: "example.invalid/app:1" }] },
      });
      if (!created) return;
      this.pods.add(`${namespace}/${name}`);
      this.counts.podCreates += 1;
      const ip = podAddress(this.podSeq % 65_536);
      await this.patch(`${base}/${name}/status`, {
        status: { phase: "Running", podIP: ip, podIPs: [{ ip }] },
      });
    } else if (roll < 0.7) {
      const key = this.random.pick(existing) ?? "";
      const [namespace, name] = key.split("/");
      await this.patch(`/api/v1/namespaces/${namespace}/pods/${name}`, {
        metadata: {
          labels: {
            app: `a${this.random.int(4)}`,
            canary: this.random.chance(0.3) ? "true" : null,
          },
        },
      });
      this.counts.podRelabels += 1;
    } else {
      const key = this.random.pick(existing) ?? "";
      const [namespace, name] = key.split("/");
      // Deleted at once: without a kubelet a graceful delete of a scheduled Pod never finishes.
      await this.send("DELETE", `/api/v1/namespaces/${namespace}/pods/${name}`, {
        gracePeriodSeconds: 0,
      });
      this.pods.delete(key);
      this.counts.podDeletes += 1;
    }
  }

  private egressSpec(): Record<string, unknown> {
    const run = { [EGRESS_RUN_LABEL]: this.run };
    switch (this.random.int(3)) {
      case 0:
        return { podSelector: { matchLabels: { ...run, app: `a${this.random.int(4)}` } } };
      case 1:
        return { namespaceSelector: { matchLabels: { ...run, team: `t${this.random.int(2)}` } } };
      default:
        return {
          namespaceSelector: { matchLabels: { ...run, team: `t${this.random.int(2)}` } },
          podSelector: { matchExpressions: [{ key: "canary", operator: "Exists" }] },
        };
    }
  }

  private async egressStep(): Promise<void> {
    const roll = this.random.next();
    const base = "/apis/crd.antrea.io/v1beta1/egresses";
    if (roll < 0.15) {
      const namespace = this.random.pick(this.egressNamespaces) ?? "";
      await this.patch(`/api/v1/namespaces/${namespace}`, {
        metadata: { labels: { team: `t${this.random.int(2)}` } },
      });
      this.counts.namespaceRelabels += 1;
      return;
    }
    const name = `eg-${this.run}-${this.random.int(5)}`;
    if (!this.egresses.has(name)) {
      const created = await this.send("POST", base, {
        apiVersion: "crd.antrea.io/v1beta1",
        kind: "Egress",
        metadata: { name },
        spec: { appliedTo: this.egressSpec(), egressIP: "192.0.2.20" },
      });
      if (created) {
        this.egresses.add(name);
        this.counts.egressCreates += 1;
      }
    } else if (roll < 0.75) {
      // A merge patch replaces appliedTo whole (a JSON merge patch merges objects: null the old keys).
      const appliedTo = { podSelector: null, namespaceSelector: null, ...this.egressSpec() };
      if (await this.patch(`${base}/${name}`, { spec: { appliedTo } }))
        this.counts.egressUpdates += 1;
    } else {
      await this.send("DELETE", `${base}/${name}`);
      this.egresses.delete(name);
      this.counts.egressDeletes += 1;
    }
  }

  private async send(method: string, path: string, body?: unknown): Promise<boolean> {
    const reply = await this.raw.request(method, path, body);
    if (reply.status >= 200 && reply.status < 300) return true;
    if (reply.status === 404 || reply.status === 409 || reply.status === 422) {
      this.counts.refused += 1;
      return false;
    }
    throw new Error(`${method} ${path}: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
  }

  private async patch(path: string, body: unknown): Promise<boolean> {
    const reply = await this.raw.request("PATCH", path, body, "application/merge-patch+json");
    if (reply.status >= 200 && reply.status < 300) return true;
    if (reply.status === 404 || reply.status === 409 || reply.status === 422) {
      this.counts.refused += 1;
      return false;
    }
    throw new Error(`PATCH ${path}: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
  }
}

/** The prefix of a purpose's rule names and references ("a-x" -> "ax"). */
function namePrefix(purpose: string): string {
  return purpose.replace(/[^a-z0-9]/g, "");
}
