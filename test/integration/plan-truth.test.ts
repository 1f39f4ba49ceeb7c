// The plan tells the truth: random changes of rules of every kind (creates, spec changes,
// deletions, each a batch as `kubectl apply -f` or `kubectl delete -f` makes it) are planned
// with `npm run plan`'s planFiles, then applied to the API server and delivered to
// reconcile-rule one event per rule in the plan's order. What the two simulated CNF pods then
// saw, every write request in order and every service restart, must be what the plan said.
// Pacing is off here, as in every test that delivers events one after another without a
// delivery layer to redeliver a deferred restart (sync-harness.ts); the burst pacing is checked
// on the pacer itself (test/unit/sync/plan-preview.test.ts).
import fc from "fast-check";
import { jest } from "@jest/globals";
import type { Cnf } from "../../dev/world/index.js";
import { planFiles } from "../../dev/plan/plan.js";
import { SECRETS, ruleResource, type KubeObject } from "../../shared/kube/index.js";
import {
  ALL_RULE_KINDS,
  RULE_API_VERSION,
  RULE_KIND_NAMES,
  exampleRule,
  requireKind,
  ruleKey,
  type ExampleRule,
  type RuleKindName,
} from "../../shared/kinds/index.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(600_000);

type PlanReport = Awaited<ReturnType<typeof planFiles>>;

const PURPOSE = "cnf-truth";
const PER_KIND = 2;
const COUNTS = Object.fromEntries(RULE_KIND_NAMES.map((k) => [k, PER_KIND])) as Record<
  RuleKindName,
  number
>;
/** Two rules of every kind, their references within the set. */
const UNIVERSE: readonly ExampleRule[] = ALL_RULE_KINDS.flatMap(({ kind }) =>
  Array.from({ length: PER_KIND }, (_, i) => exampleRule(kind, i, COUNTS)),
);
const keyOf = (r: { kind: string; name: string }): string => ruleKey(r);
const byKey = new Map(UNIVERSE.map((r) => [keyOf(r), r]));

/** One batch: apply `picks` (changing those that exist by `change`), or delete them. */
interface Step {
  readonly action: "apply" | "delete";
  readonly picks: readonly number[];
  readonly change: number;
}

const step = fc.record({
  action: fc.constantFrom("apply" as const, "delete" as const),
  picks: fc.uniqueArray(fc.nat(UNIVERSE.length - 1), { minLength: 1, maxLength: 6 }),
  change: fc.nat(1000),
});

/** Whatever `rule` references (within the set), transitively, itself included. */
function withReferences(rule: ExampleRule, into: Map<string, ExampleRule>): void {
  if (into.has(keyOf(rule))) return;
  into.set(keyOf(rule), rule);
  for (const ref of requireKind(rule.kind).references(rule.spec)) {
    const target = byKey.get(keyOf(ref));
    if (target !== undefined) withReferences(target, into);
  }
}

/** `picked` and every rule of `current` that references one of them, transitively. */
function withReferrers(
  picked: readonly ExampleRule[],
  current: ReadonlyMap<string, Record<string, unknown>>,
): ExampleRule[] {
  const out = new Map(picked.map((r) => [keyOf(r), r]));
  for (let grew = true; grew;) {
    grew = false;
    for (const [key, spec] of current) {
      const rule = byKey.get(key);
      if (rule === undefined || out.has(key)) continue;
      const refs = requireKind(rule.kind).references(spec);
      if (refs.some((ref) => out.has(keyOf(ref)))) {
        out.set(key, rule);
        grew = true;
      }
    }
  }
  return [...out.values()];
}

class Truth {
  /** The spec of every rule the API server holds, by key. */
  readonly current = new Map<string, Record<string, unknown>>();
  /** Kinds whose writes a plan predicted and the CNF then saw, with the action. */
  static readonly seen = new Set<string>();

  constructor(
    readonly world: SyncWorld,
    readonly cnf: Cnf,
  ) {}

  manifest(rule: ExampleRule, spec: Record<string, unknown>): KubeObject {
    return {
      apiVersion: RULE_API_VERSION,
      kind: rule.kind,
      metadata: {
        name: rule.name,
        namespace: this.world.namespace,
        labels: { sdewanPurpose: PURPOSE },
      },
      spec,
    };
  }

  /** The objects of a step's file, with their specs once applied. */
  objectsOf(s: Step): { objects: KubeObject[]; specs: Map<string, Record<string, unknown>> } {
    const picked = s.picks.flatMap((i) => (UNIVERSE[i] === undefined ? [] : [UNIVERSE[i]]));
    const specs = new Map<string, Record<string, unknown>>();
    if (s.action === "delete") {
      const present = picked.filter((r) => this.current.has(keyOf(r)));
      const rules = withReferrers(present, this.current);
      return { objects: rules.map((r) => this.manifest(r, r.spec)), specs };
    }
    const closed = new Map<string, ExampleRule>();
    for (const rule of picked) withReferences(rule, closed);
    const objects = [...closed.values()].map((rule) => {
      const now = this.current.get(keyOf(rule));
      const change = requireKind(rule.kind).example.change;
      const spec =
        now === undefined
          ? structuredClone(rule.spec)
          : picked.includes(rule) && change !== undefined
            ? { ...now, ...change(s.change) }
            : now;
      specs.set(keyOf(rule), spec);
      return this.manifest(rule, spec);
    });
    return { objects, specs };
  }

  async plan(s: Step, objects: readonly KubeObject[]): Promise<PlanReport> {
    const report = await planFiles({
      kube: this.world.kube,
      env: this.world.env,
      objects,
      delete: s.action === "delete",
      namespace: this.world.namespace,
      log: this.world.log,
    });
    expect(report.pacing.minIntervalMs).toBe(0);
    expect(report.cnfs.length).toBeLessThanOrEqual(1);
    return report;
  }

  /** The resourceVersion of every object of a step, by key. */
  async versions(objects: readonly KubeObject[]): Promise<Map<string, string | undefined>> {
    const out = new Map<string, string | undefined>();
    for (const object of objects) {
      const type = ruleResource(requireKind(object.kind));
      const live = await this.world.kube.get(type, {
        namespace: this.world.namespace,
        name: object.metadata.name,
      });
      out.set(
        keyOf({ kind: object.kind, name: object.metadata.name }),
        live?.metadata.resourceVersion,
      );
    }
    return out;
  }

  /** Makes the step's change on the API server, as kubectl would. */
  async change(
    s: Step,
    specs: ReadonlyMap<string, Record<string, unknown>>,
    objects: readonly KubeObject[],
  ) {
    for (const object of objects) {
      const key = keyOf({ kind: object.kind, name: object.metadata.name });
      if (s.action === "delete") {
        await this.world.deleteRule(object.kind, object.metadata.name);
        this.current.delete(key);
        continue;
      }
      const spec = specs.get(key) ?? {};
      if (this.current.has(key)) {
        const type = ruleResource(requireKind(object.kind));
        await this.world.kube.mergePatch(
          type,
          { namespace: this.world.namespace, name: object.metadata.name },
          { spec },
        );
      } else {
        await this.world.createRule(object.kind, object.metadata.name, PURPOSE, spec);
      }
      this.current.set(key, spec);
    }
  }

  /** Every write request a pod saw since the last reset, "METHOD collection[/name]". */
  writesOn(podName: string): string[] {
    const pod = this.cnf.pods.find((p) => p.name === podName);
    return (pod?.sim.requests() ?? [])
      .filter((r) => r.method !== "GET" && !/^\/cgi-bin\/luci\/?$/.test(r.path))
      .filter((r) => !r.path.includes("/sdewan/v1/service/"))
      .map((r) => {
        const [, module, , collection, name] =
          /^\/cgi-bin\/luci\/sdewan\/([^/]+)\/(v1)\/([^/]+)(?:\/(.+))?$/.exec(r.path) ?? [];
        const object = name === undefined ? "" : `/${decodeURIComponent(name)}`;
        return `${r.method} ${module}/${collection}${object}`;
      });
  }

  restartsOn(podName: string): Record<string, number> {
    const pod = this.cnf.pods.find((p) => p.name === podName);
    const counts: Record<string, number> = {};
    for (const action of pod?.sim.serviceActions() ?? []) {
      counts[action.service] = (counts[action.service] ?? 0) + 1;
    }
    return counts;
  }

  async run(s: Step): Promise<void> {
    const { objects, specs } = this.objectsOf(s);
    if (objects.length === 0) return;
    this.world.resetCounters();
    const report = await this.plan(s, objects);
    const plan = report.cnfs[0];
    if (plan === undefined) {
      // A re-apply of what is stored: the plan says no function runs, because the API server
      // stores nothing and so sends no event. Both claims are checked.
      expect(report.skipped.map((k) => [k.kind, k.name, k.why.split(":")[0]])).toEqual(
        objects.map((o) => [o.kind, o.metadata.name, "unchanged"]),
      );
      const before = await this.versions(objects);
      await this.change(s, specs, objects);
      expect(await this.versions(objects)).toEqual(before);
      return;
    }
    // Every ready pod is planned for: nothing below holds vacuously.
    expect(plan.withheld).toBeUndefined();
    expect(plan.pods.map((p) => p.pod).sort()).toEqual(this.cnf.pods.map((p) => p.name).sort());
    // Planning read the pods and wrote nothing.
    for (const pod of this.cnf.pods) expect(this.writesOn(pod.name)).toEqual([]);
    expect(this.world.serviceRestarts(this.cnf)).toEqual([[], []]);
    await this.change(s, specs, objects);
    this.world.resetCounters();
    for (const rule of plan.rules) {
      // A deletion of a rule held by its finalizer reaches reconcile-rule as an update (its
      // deletionTimestamp set), as a watch tells it; a delete event means the rule is gone.
      const outcome = await this.world.reconcile(rule.kind, rule.name, "update");
      expect([rule.kind, rule.name, outcome.kind]).toEqual([rule.kind, rule.name, "done"]);
    }
    for (const pod of plan.pods) {
      const planned = (pod.requests ?? []).map(
        (r) => `${r.method} ${r.collection}${r.method === "POST" ? "" : `/${r.name}`}`,
      );
      expect({ pod: pod.pod, writes: this.writesOn(pod.pod) }).toEqual({
        pod: pod.pod,
        writes: planned,
      });
      expect({ pod: pod.pod, restarts: this.restartsOn(pod.pod) }).toEqual({
        pod: pod.pod,
        restarts: pod.restarts,
      });
    }
    for (const rule of plan.rules) {
      if (rule.pods.some((p) => p.change !== "none" && p.change !== "unknown")) {
        Truth.seen.add(`${rule.kind} ${rule.action}`);
      }
    }
  }
}

/** Every kind created, changed where the registry can change it, and deleted: checked first. */
const EVERY_KIND: Step[] = [
  { action: "apply", picks: UNIVERSE.map((_, i) => i), change: 0 },
  { action: "apply", picks: UNIVERSE.map((_, i) => i), change: 1 },
  { action: "delete", picks: UNIVERSE.map((_, i) => i), change: 0 },
];

describe("what the functions do after a change is what its plan said", () => {
  it("for random batches of creates, changes and deletions of every rule kind", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 5 }), async (steps) => {
        const world = await SyncWorld.create();
        try {
          // The CNF's login (the simulators' default) where the preview reads it.
          await world.kube.create(SECRETS, {
            metadata: { namespace: world.namespace, name: "cnf-credentials" },
            stringData: { password: "" },
          });
          world.env["CNF_CREDENTIALS_SECRET"] = `${world.namespace}/cnf-credentials`;
          const cnf = await world.createCnf(PURPOSE);
          const truth = new Truth(world, cnf);
          for (const s of steps) await truth.run(s);
        } finally {
          await world.close();
        }
      }),
      { numRuns: 12, examples: [[EVERY_KIND]], endOnFailure: true },
    );
    const kinds = RULE_KIND_NAMES.flatMap((kind) => [`${kind} apply`, `${kind} delete`]);
    expect(kinds.filter((k) => !Truth.seen.has(k))).toEqual([]);
  });
});
