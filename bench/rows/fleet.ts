/**
 * Fleet rows (issue 28 item 4): 50 CNFs of 2 pods x 200 rules (10,000 rules) on one control
 * plane, ours as the image runs it: every rule created at once, every CNF pod restarting at once
 * (a node reboot), a rolling update of every CNF. Each size of `fleetCnfs` (1, 10, 50) runs the
 * same three scenarios in its own namespace of the fleet's own control plane, so each row also
 * says how each cost grows with the CNFs. Columns: wall time, the functions' API requests by verb
 * (the API server's audit log), what etcd stored (its own metrics), CNF requests, service restarts
 * per pod, each function process's memory; beside the floor (the fewest requests the work needs,
 * counted as the peer rows' floors count them; see docs/benchmarks.md "Fleet rows").
 * `--only fleet-create` (or any of the three) runs all three: each starts from the one before.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { BenchContext } from "../lib/context.js";
import {
  runFleetScenarios,
  type FleetOutcome,
  type FleetScenario,
} from "../lib/fleet/scenarios.js";
import { startFleetPlane, startFleetWorld } from "../lib/fleet/world.js";
import { atMost, type RowResult } from "../lib/report.js";
import { int, num } from "../lib/stats.js";

export const FLEET_ROWS: readonly { id: string; scenario: FleetScenario }[] = [
  { id: "fleet-create", scenario: "create" },
  { id: "fleet-reboot", scenario: "reboot" },
  { id: "fleet-rollout", scenario: "rollout" },
];

/** Issue 28: per rule in a burst at most 1.5x the floor; at most 3 restarts per service per pod. */
const FLOOR_FACTOR = 1.5;
const RESTARTS_PER_SERVICE = 3;
const FUNCTION_RSS_MB = 100;
const COLLECTIONS = 2;

export interface Floor {
  readonly apiRequests: number;
  readonly apiWrites: number;
  readonly cnfRequests: number;
  readonly restartsMax: number;
}

/**
 * The fewest requests each scenario needs for `cnfs` CNFs of 2 pods and `perCnf` rules each.
 * Per rule created: one read, the finalizer, the status. A pod that lost its state: one read of
 * the pod, one list per kind of its CNF's rules (shared by the pods of a CNF that restart
 * together), no status write (nothing about a rule changed). Per pod brought up to date: a login,
 * one list per collection, every object written once, one restart of the service.
 */
export function fleetFloor(scenario: FleetScenario, cnfs: number, perCnf: number): Floor {
  const pods = 2 * cnfs;
  const perPod = 1 + COLLECTIONS + perCnf + 1;
  switch (scenario) {
    case "create":
      return {
        apiRequests: 3 * cnfs * perCnf,
        apiWrites: 2 * cnfs * perCnf,
        cnfRequests: pods * perPod,
        restartsMax: 1,
      };
    case "reboot":
      return {
        apiRequests: pods + COLLECTIONS * cnfs,
        apiWrites: 0,
        cnfRequests: pods * perPod,
        restartsMax: 1,
      };
    case "rollout":
      // The new pods come up one after the other: each is read and its CNF's rules listed.
      return {
        apiRequests: pods * (1 + COLLECTIONS),
        apiWrites: 0,
        cnfRequests: pods * perPod,
        restartsMax: 1,
      };
  }
}

const UPSTREAM_NOTE =
  "upstream not run at fleet size: on one CNF of 300 rules it does not converge within 60 s " +
  "(peer-create, peer-delete, peer-pod-restart rows: stuck with one mwan3 restart per rule)";

function describe(scenario: FleetScenario, cnfs: number, perCnf: number): string {
  const what = `${cnfs} CNFs x 2 pods x ${perCnf} rules (${int(cnfs * perCnf)} rules)`;
  switch (scenario) {
    case "create":
      return `fleet: ${what} created at once -> on every pod, statuses applied`;
    case "reboot":
      return `fleet: ${what}, every CNF pod restarting at once (node reboot, state lost) -> healed`;
    case "rollout":
      return `fleet: ${what}, rolling update of every CNF (new pods one by one, old deleted) -> on the new pods`;
  }
}

const seconds = (o: FleetOutcome): string =>
  o.converged
    ? `${num(o.ms / 1000, 1)} s`
    : o.completed
      ? `${num(o.ms / 1000, 1)} s (over its ${o.budgetMs / 1000} s budget)`
      : `not complete after ${num(o.ms / 1000, 0)} s`;

function byVerb(api: ReadonlyMap<string, number>): string {
  const verbs = new Map<string, number>();
  for (const [key, n] of api) {
    const verb = key.split(" ")[0] ?? "?";
    verbs.set(verb, (verbs.get(verb) ?? 0) + n);
  }
  return [...verbs]
    .sort((a, b) => b[1] - a[1])
    .map(([verb, n]) => `${verb} ${int(n)}`)
    .join(", ");
}

function detail(api: ReadonlyMap<string, number>): string {
  return [...api]
    .sort((a, b) => b[1] - a[1])
    .map(([key, n]) => `${key} ${int(n)}`)
    .join(", ");
}

function memory(o: FleetOutcome): string {
  return Object.entries(o.memory)
    .map(([fn, m]) => `${fn} ${num(m.rssMb, 0)} MiB (peak ${num(m.peakMb, 0)})`)
    .join(", ");
}

const peakMb = (o: FleetOutcome): number =>
  Math.max(...Object.values(o.memory).map((m) => m.peakMb));

interface Sized {
  readonly cnfs: number;
  readonly outcome: FleetOutcome;
}

/** "1 / 10 / 50 CNFs: a / b / c" for one cost. */
function growth(sized: readonly Sized[], f: (s: Sized) => string): string {
  return `${sized.map((s) => s.cnfs).join(" / ")} CNFs: ${sized.map(f).join(" / ")}`;
}

function row(
  id: string,
  scenario: FleetScenario,
  perCnf: number,
  sized: readonly Sized[],
): RowResult {
  const last = sized.at(-1);
  if (last === undefined) throw new Error("no fleet size was run");
  const o = last.outcome;
  const rules = last.cnfs * perCnf;
  const floor = fleetFloor(scenario, last.cnfs, perCnf);
  const ratio = (a: number, b: number): string => (b > 0 ? `${num(a / b, 1)}x` : "n/a");
  const perRule = (s: Sized, n: number): string => num(n / (s.cnfs * perCnf), 2);
  return {
    id,
    metric: describe(scenario, last.cnfs, perCnf),
    target: `API requests <= ${FLOOR_FACTOR}x floor; <= ${RESTARTS_PER_SERVICE} restarts per service per pod; function RSS <= ${FUNCTION_RSS_MB} MB`,
    measured:
      `${seconds(o)} (floor's time not measured); API requests ${int(o.apiRequests)} ` +
      `(${perRule(last, o.apiRequests)} per rule; floor ${int(floor.apiRequests)}, ours/floor ` +
      `${ratio(o.apiRequests, floor.apiRequests)}), writes ${int(o.apiWrites)} (floor ${int(floor.apiWrites)}); ` +
      `restarts per service per pod max ${o.restartsMax} (mean ${num(o.restartsMean, 1)}; floor ${floor.restartsMax}); ` +
      `${UPSTREAM_NOTE}`,
    counts:
      `API by verb: ${byVerb(o.api)} (${detail(o.api)}); CNF requests ${int(o.cnfRequests)} over ` +
      `${o.pods} pods (floor ${int(floor.cnfRequests)}); etcd ${int(o.etcdPuts)} puts, ` +
      `${num(o.etcdBytes / 2 ** 20, 1)} MiB written (${int(o.etcdBytes / rules)} B per rule; the ` +
      `bench's own writes included); memory ${memory(o)}; growth ` +
      `${growth(sized, (s) => seconds(s.outcome))}; API per rule ` +
      `${sized.map((s) => perRule(s, s.outcome.apiRequests)).join(" / ")}; API writes ` +
      `${sized.map((s) => int(s.outcome.apiWrites)).join(" / ")}; CNF requests per pod ` +
      `${sized.map((s) => int(s.outcome.cnfRequests / Math.max(1, s.outcome.pods))).join(" / ")}; ` +
      `restarts max ${sized.map((s) => s.outcome.restartsMax).join(" / ")}; etcd MiB ` +
      `${sized.map((s) => num(s.outcome.etcdBytes / 2 ** 20, 1)).join(" / ")}; peak RSS MiB ` +
      `${sized.map((s) => num(peakMb(s.outcome), 0)).join(" / ")}` +
      (o.problem === undefined ? "" : `; stuck at: ${o.problem}`),
    checks: [
      atMost("converged", o.converged ? 0 : 1, 0),
      atMost("API requests vs floor", o.apiRequests / Math.max(1, floor.apiRequests), FLOOR_FACTOR),
      atMost("restarts per service per pod", o.restartsMax, RESTARTS_PER_SERVICE),
      atMost("function RSS", peakMb(o), FUNCTION_RSS_MB),
    ],
    values: Object.fromEntries(
      sized.flatMap((s): [string, number | boolean][] => {
        const f = fleetFloor(scenario, s.cnfs, perCnf);
        const p = `cnfs${s.cnfs}.`;
        const out = s.outcome;
        return [
          [`${p}ms`, out.ms],
          [`${p}converged`, out.converged],
          [`${p}completed`, out.completed],
          [`${p}apiRequests`, out.apiRequests],
          [`${p}apiWrites`, out.apiWrites],
          ...[...out.api].map(([key, n]): [string, number] => [`${p}api.${key}`, n]),
          [`${p}cnfRequests`, out.cnfRequests],
          [`${p}restartsMax`, out.restartsMax],
          [`${p}restartsMean`, out.restartsMean],
          [`${p}etcdPuts`, out.etcdPuts],
          [`${p}etcdBytes`, out.etcdBytes],
          ...Object.entries(out.memory).flatMap(([fn, m]): [string, number][] => [
            [`${p}${fn}.rssMb`, m.rssMb],
            [`${p}${fn}.peakMb`, m.peakMb],
          ]),
          [`${p}floorApiRequests`, f.apiRequests],
          [`${p}floorApiWrites`, f.apiWrites],
          [`${p}floorCnfRequests`, f.cnfRequests],
        ];
      }),
    ),
  };
}

/** The growth table of the log and docs: each cost at each size, per scenario. */
export function growthTable(
  perCnf: number,
  results: readonly { cnfs: number; outcomes: Record<FleetScenario, FleetOutcome> }[],
): string {
  const lines = [
    "| scenario | CNFs | rules | time | API requests (per rule) | API writes | floor API | CNF requests per pod | restarts max | etcd MiB | peak RSS MiB |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const { scenario } of FLEET_ROWS) {
    for (const { cnfs, outcomes } of results) {
      const o = outcomes[scenario];
      const rules = cnfs * perCnf;
      lines.push(
        `| ${scenario} | ${cnfs} | ${int(rules)} | ${seconds(o)} | ${int(o.apiRequests)} (${num(o.apiRequests / rules, 2)}) | ` +
          `${int(o.apiWrites)} | ${int(fleetFloor(scenario, cnfs, perCnf).apiRequests)} | ` +
          `${int(o.cnfRequests / Math.max(1, o.pods))} | ${o.restartsMax} | ${num(o.etcdBytes / 2 ** 20, 1)} | ${num(peakMb(o), 0)} |`,
      );
    }
  }
  return lines.join("\n");
}

/** SDEWAN_BENCH_FLEET_CNFS=1,10: other sizes than the run's (e.g. to leave out 50 on a busy machine). */
function fleetSizes(ctx: BenchContext): readonly number[] {
  const text = process.env["SDEWAN_BENCH_FLEET_CNFS"];
  if (text === undefined || text.trim() === "") return ctx.sizes.fleetCnfs;
  const sizes = text.split(",").map((x) => Number(x.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new Error(
      `SDEWAN_BENCH_FLEET_CNFS must be whole numbers >= 1, got ${JSON.stringify(text)}`,
    );
  }
  return sizes;
}

export async function benchFleet(
  ctx: BenchContext,
  wanted: (id: string) => boolean,
): Promise<RowResult[]> {
  const perCnf = ctx.sizes.fleetRulesPerCnf;
  const fp = await startFleetPlane(ctx);
  const results: { cnfs: number; outcomes: Record<FleetScenario, FleetOutcome> }[] = [];
  try {
    for (const cnfs of fleetSizes(ctx)) {
      const dir = path.join(ctx.workDir, `fleet-${cnfs}`);
      await mkdir(dir, { recursive: true });
      const started = Date.now();
      const world = await startFleetWorld(ctx, fp, cnfs, dir);
      ctx.log(`fleet ${cnfs} CNFs: world ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
      try {
        const rules = cnfs * perCnf;
        const outcomes = await runFleetScenarios(
          fp,
          world,
          perCnf,
          {
            createMs: Math.max(60_000, rules * 30),
            rebootMs: Math.max(60_000, rules * 20),
            rolloutMs: Math.max(60_000, rules * 20),
          },
          (line) => ctx.log(line),
        );
        results.push({ cnfs, outcomes });
      } finally {
        await world.close();
      }
    }
  } finally {
    await fp.stop();
  }
  ctx.log(`fleet growth:\n${growthTable(perCnf, results)}`);
  return FLEET_ROWS.filter((r) => wanted(r.id)).map(({ id, scenario }) =>
    row(
      id,
      scenario,
      perCnf,
      results.map((r) => ({ cnfs: r.cnfs, outcome: r.outcomes[scenario] })),
    ),
  );
}
