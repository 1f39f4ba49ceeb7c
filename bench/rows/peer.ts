/**
 * Peer rows (issue 19 items 1 and 2): the same four scenarios for the upstream SDEWAN controller
 * (Go, controller-runtime), for ours (connector + function server, from source) and for a floor
 * (the fewest requests the work needs, from a plain client), one after the other in one run, on
 * a CNF of two pods: N rules created at once, one rule's spec changed, one CNF pod restarted
 * (state lost), every rule deleted at once. Each row prints upstream / ours / ratio and ours /
 * floor, with the API requests, CNF requests and mwan3 restarts of each.
 *
 * The upstream side runs when `npm run upstream:build` has built it, unless
 * SDEWAN_BENCH_UPSTREAM=0 (quick local runs); a row it does not finish within its budget says
 * "did not converge in <budget> s". See docs/benchmarks.md ("Peer rows and floors").
 */
import type { BenchContext } from "../lib/context.js";
import { measureFloors } from "../lib/peer/floor.js";
import { startOurWorld } from "../lib/peer/ours.js";
import { peerRules, type PeerRule } from "../lib/peer/rules.js";
import {
  SPEC_CHANGE_PORTS,
  runScenarios,
  type Budgets,
  type Outcome,
  type ScenarioId,
} from "../lib/peer/scenarios.js";
import { findUpstreamBuild, startUpstreamWorld } from "../lib/peer/upstream.js";
import type { PeerWorld } from "../lib/peer/world.js";
import { atMost, type RowResult } from "../lib/report.js";
import { int, num } from "../lib/stats.js";

export const PEER_ROWS: readonly { id: string; scenario: ScenarioId }[] = [
  { id: "peer-create", scenario: "create" },
  { id: "peer-delete", scenario: "delete" },
  { id: "peer-pod-restart", scenario: "pod-restart" },
  { id: "peer-spec-change", scenario: "spec-change" },
];

const BUDGETS: Budgets = {
  createMs: 60_000,
  specChangeMs: 15_000,
  podRestartMs: 30_000,
  deleteMs: 60_000,
};

/** The target of issue 19 item 2. */
const FLOOR_FACTOR = 1.5;

type Results = Record<ScenarioId, Outcome>;

function describeScenario(scenario: ScenarioId, rules: readonly PeerRule[]): string {
  const policies = rules.filter((r) => r.kind === "Mwan3Policy").length;
  const what = `${rules.length} rules (${policies} Mwan3Policy + ${rules.length - policies} Mwan3Rule)`;
  switch (scenario) {
    case "create":
      return `peer: ${what} created at once -> on both pods, statuses applied`;
    case "delete":
      return `peer: ${what} deleted at once -> off both pods, CRs gone`;
    case "pod-restart":
      return `peer: one of 2 CNF pods restarted (state lost), ${what} -> healed`;
    case "spec-change":
      return `peer: spec change of one rule -> on both pods, status applied (median of ${SPEC_CHANGE_PORTS.length}; counts per change)`;
  }
}

const seconds = (o: Outcome): string =>
  o.converged ? `${num(o.ms / 1000, 2)} s` : `did not converge in ${o.budgetMs / 1000} s`;

const ratio = (a: number, b: number): string => (b > 0 ? `${num(a / b, 1)}x` : "n/a");

async function runWorld(
  ctx: BenchContext,
  label: string,
  start: () => Promise<PeerWorld>,
  rules: readonly PeerRule[],
): Promise<Results> {
  const started = Date.now();
  const world = await start();
  try {
    return await runScenarios(world, rules, BUDGETS, (line) => ctx.log(line));
  } finally {
    await world.close();
    ctx.log(`${label}: ${((Date.now() - started) / 1000).toFixed(0)} s in all`);
  }
}

async function upstreamResults(
  ctx: BenchContext,
  rules: readonly PeerRule[],
): Promise<Results | string> {
  if (process.env["SDEWAN_BENCH_UPSTREAM"] === "0") return "skipped (SDEWAN_BENCH_UPSTREAM=0)";
  const build = await findUpstreamBuild();
  if (!build.ok) return build.reason;
  try {
    return await runWorld(ctx, "upstream", () => startUpstreamWorld(ctx, build, "peer"), rules);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    ctx.log(`upstream failed: ${error instanceof Error ? (error.stack ?? message) : message}`);
    return `failed: ${message}`;
  }
}

interface RowInput {
  readonly id: string;
  readonly scenario: ScenarioId;
  readonly rules: readonly PeerRule[];
  readonly ours: Outcome;
  readonly floor: Outcome;
  /** The outcome, or why there is none (not built, skipped, failed to start). */
  readonly upstream: Outcome | string;
}

function row({ id, scenario, rules, ours, floor, upstream }: RowInput): RowResult {
  const up = typeof upstream === "string" ? undefined : upstream;
  const upTime =
    up === undefined
      ? `upstream ${upstream as string}`
      : `upstream ${seconds(up)}${up.recovery === undefined ? "" : ` (${up.recovery})`}`;
  const versus =
    up !== undefined && ours.converged
      ? up.converged
        ? `, upstream/ours ${ratio(up.ms, ours.ms)}`
        : `, upstream/ours > ${ratio(up.ms, ours.ms)}`
      : "";
  const timeVsFloor = ours.ms / floor.ms;
  const apiVsFloor = floor.apiRequests > 0 ? ours.apiRequests / floor.apiRequests : NaN;
  const count = (n: number): string => (n >= 100 ? int(n) : num(n, 1));
  const three = (f: (o: Outcome) => number): string =>
    `${up === undefined ? "" : `upstream ${count(f(up))} / `}ours ${count(f(ours))} / floor ${count(f(floor))}`;
  return {
    id,
    metric: describeScenario(scenario, rules),
    target: `ours <= ${FLOOR_FACTOR}x floor (time, API requests); ours <= upstream`,
    measured:
      `${upTime}; ours ${seconds(ours)}${versus}; floor ${num(floor.ms / 1000, 2)} s, ` +
      `ours/floor ${ratio(ours.ms, floor.ms)}`,
    counts:
      `API requests ${three((o) => o.apiRequests)} (ours/floor ${ratio(ours.apiRequests, floor.apiRequests)}); ` +
      `CNF requests ${three((o) => o.cnfRequests)}; mwan3 restarts ${three((o) => o.restarts)}; ` +
      `retried ${up === undefined ? "" : `upstream ${count(up.retries)} reconciles / `}ours ${count(ours.retries)} deliveries` +
      (ours.problem === undefined ? "" : `; ours stuck at: ${ours.problem}`) +
      (up?.problem === undefined ? "" : `; upstream stuck at: ${up.problem}`),
    checks: [
      atMost("ours converged", ours.converged ? 0 : 1, 0),
      atMost("time vs floor", timeVsFloor, FLOOR_FACTOR),
      atMost("API requests vs floor", apiVsFloor, FLOOR_FACTOR),
      ...(up?.converged === true ? [atMost("time vs upstream", ours.ms, up.ms)] : []),
    ],
    values: {
      rules: rules.length,
      oursMs: ours.ms,
      oursConverged: ours.converged,
      oursApiRequests: ours.apiRequests,
      oursCnfRequests: ours.cnfRequests,
      oursRestarts: ours.restarts,
      oursRetries: ours.retries,
      floorMs: floor.ms,
      floorApiRequests: floor.apiRequests,
      floorCnfRequests: floor.cnfRequests,
      floorRestarts: floor.restarts,
      ...(up === undefined
        ? { upstream: upstream as string }
        : {
            upstreamMs: up.ms,
            upstreamConverged: up.converged,
            upstreamBudgetMs: up.budgetMs,
            upstreamApiRequests: up.apiRequests,
            upstreamCnfRequests: up.cnfRequests,
            upstreamRestarts: up.restarts,
            upstreamRetries: up.retries,
          }),
    },
  };
}

export async function benchPeer(
  ctx: BenchContext,
  wanted: (id: string) => boolean,
): Promise<RowResult[]> {
  const rules = peerRules(ctx.sizes.peerRules);
  // One after the other, never side by side: each gets the machine's two cores to itself.
  const floor = await measureFloors(ctx, rules, "peerfloor");
  ctx.log(
    `floor: ${Object.entries(floor)
      .map(([s, o]) => `${s} ${Math.round(o.ms)} ms, ${o.apiRequests} API, ${o.cnfRequests} CNF`)
      .join("; ")}`,
  );
  const ours = await runWorld(ctx, "ours", () => startOurWorld(ctx, "peer"), rules);
  const upstream = await upstreamResults(ctx, rules);
  return PEER_ROWS.filter((r) => wanted(r.id)).map(({ id, scenario }) =>
    row({
      id,
      scenario,
      rules,
      ours: ours[scenario],
      floor: floor[scenario],
      upstream: typeof upstream === "string" ? upstream : upstream[scenario],
    }),
  );
}
