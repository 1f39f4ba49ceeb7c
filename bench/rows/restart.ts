/**
 * on-deployment-ready row: a CNF with 1,000 rules over all kinds on 2 pods; both pods restart
 * (empty CNFs), go not ready, come back; one Deployment event must re-apply everything and turn
 * every status true. Timed: that event (and any redelivery it asks for with 503). Also counted:
 * the Kubernetes Events of the whole restart (not-ready event included) and their API requests.
 */
import path from "node:path";
import { totalWrites } from "../../dev/cnf-sim/index.js";
import { createOnDeploymentReady } from "../../functions/on-deployment-ready/index.js";
import { applyAll, bigCnf, endStateProblems, restartRun } from "../lib/big-cnf.js";
import type { BenchContext } from "../lib/context.js";
import { RecordingKube } from "../lib/recording-kube.js";
import { atMost, type RowResult } from "../lib/report.js";
import { RULE_KIND_NAMES } from "../../shared/kinds/index.js";
import { ruleCollections } from "../lib/rules.js";
import { serveInProcess } from "../lib/serve.js";
import { int, ms, num } from "../lib/stats.js";
import type { EventReply } from "../lib/events.js";

/** Events of a CNF restart: an operator reads a handful (issue 28), at about 1 request each. */
const EVENTS_PER_RESTART = 5;
const REQUESTS_PER_EVENT = 1.2;

/** Kubernetes Events the deliveries wrote, and the API requests those took. */
function eventCost(replies: readonly EventReply[]): { events: number; requests: number } {
  return {
    events: replies.reduce((s, r) => s + (r.calls.eventsRecorded ?? 0), 0),
    requests: replies.reduce((s, r) => s + (r.calls.eventRequests ?? 0), 0),
  };
}

export async function benchRestart(ctx: BenchContext): Promise<RowResult[]> {
  const big = await bigCnf(ctx);
  const kube = new RecordingKube(ctx.cluster.adminClient());
  const fn = createOnDeploymentReady({ kube: () => kube });
  const server = await serveInProcess([fn], path.join(ctx.workDir, "on-deployment-ready.log"));
  const url = `${server.url}/on-deployment-ready`;
  try {
    if (!big.applied) await applyAll(big, url, ctx.cluster.adminClient());
    const run = await restartRun(ctx, big, url, () => {
      kube.tally.reset();
      for (const pod of big.cnf.pods) pod.sim.resetCounters();
    });
    const problems = await endStateProblems(big, ctx.cluster.adminClient());
    const last = run.replies.at(-1);
    const api = run.replies.reduce((s, r) => s + r.calls.api, 0);
    const cnfCalls = run.replies.reduce((s, r) => s + r.calls.cnf, 0);
    const collections = ruleCollections().length;
    const perPod = big.cnf.pods.map((pod) => {
      const c = pod.sim.counters();
      const reads = Object.values(c.collections).reduce((s, x) => s + x.reads, 0);
      return { reads, writes: totalWrites(c), restarts: c.serviceActions, logins: c.logins };
    });
    const maxReads = Math.max(...perPod.map((p) => p.reads));
    const n = big.rules.length;
    const events = eventCost([...(run.before ?? []), ...run.replies]);
    const perEvent = events.events === 0 ? 0 : events.requests / events.events;
    return [
      {
        id: "cnf-restart",
        metric: `on-deployment-ready: CNF restart, ${int(n)} rules over all ${RULE_KIND_NAMES.length} kinds x 2 pods -> all applied, statuses true`,
        target: `<= 3 s; CNF reads per pod <= number of collections; <= ${EVENTS_PER_RESTART} Events per restart at <= ${REQUESTS_PER_EVENT} API requests each`,
        measured:
          `${ms(run.ms)}; CNF reads per pod ${perPod.map((p) => p.reads).join("/")} for ${collections} collections; ` +
          `${events.events} Events at ${perEvent.toFixed(2)} API requests each`,
        counts:
          `${run.replies.length} deliver${run.replies.length === 1 ? "y" : "ies"} (last: ${last?.status} ${last?.detail}); ` +
          `${int(api)} API requests (${kube.tally.describe()}); ` +
          `Events of the restart (not-ready event too): ${events.events} recorded, ${events.requests} API requests; ` +
          `${int(cnfCalls)} CNF requests: per pod ` +
          perPod
            .map(
              (p) =>
                `${p.reads} reads + ${p.writes} writes + ${p.restarts} restarts + ${p.logins} login`,
            )
            .join(" / ") +
          (problems.length > 0 ? `; END STATE WRONG: ${problems.slice(0, 3).join("; ")}` : ""),
        checks: [
          atMost("time", run.ms, 3_000),
          atMost("CNF reads", maxReads, collections),
          atMost("Events per restart", events.events, EVENTS_PER_RESTART),
          atMost("API requests per Event", perEvent, REQUESTS_PER_EVENT),
        ],
        values: {
          rules: n,
          ms: run.ms,
          deliveries: run.replies.length,
          apiRequests: api,
          cnfRequests: cnfCalls,
          cnfReadsPerPodMax: maxReads,
          collections,
          apiPerRule: num(api / n, 2),
          eventsPerRestart: events.events,
          eventRequests: events.requests,
          eventRequestsPerEvent: num(perEvent, 2),
        },
        ...(problems.length > 0 || last?.status !== 202
          ? {
              error: `end state wrong: ${[`last reply ${last?.status}`, ...problems].slice(0, 4).join("; ")}`,
            }
          : {}),
      },
    ];
  } finally {
    await server.close();
  }
}
