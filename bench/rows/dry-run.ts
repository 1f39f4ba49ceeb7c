/**
 * Dry-run plan rows (docs/plan.md): what `kubectl apply --dry-run=server` of a rule costs through
 * the bench's kube-apiserver, with the real webhook over TLS reading a two-pod CNF of simulators
 * for the plan. A Mwan3Rule created (a rule on a 2-pod CNF), and its Mwan3Policy changed while 50
 * Mwan3Rules use it (the plan lists them). Each reply must carry the plan's warnings.
 */
import { randomUUID } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pino } from "pino";
import { kubeAdmissionReader } from "../../shared/admission/index.js";
import { serveValidateAdmission } from "../../functions/validate-admission/serve.js";
import { SECRETS, createKubeClient, ruleResource } from "../../shared/kube/index.js";
import { RULE_API_VERSION, requireKind } from "../../shared/kinds/index.js";
import { Runtime, createLogger } from "../../shared/runtime/index.js";
import type { BenchContext } from "../lib/context.js";
import { registerBenchWebhook } from "../lib/webhook.js";
import { RawApi } from "../lib/raw-api.js";
import { atMost, type RowResult } from "../lib/report.js";
import { ms, percentiles } from "../lib/stats.js";

const PURPOSE = "cnf-dry";
const LABELS = { sdewanPurpose: PURPOSE };
const WEBHOOK_LABEL = "sdewan.bench/dry-run-webhook";
const DEPENDENTS = 50;
const policySpec = (weight: number) => ({
  members: [{ network: "ovn-net1", metric: 2, weight }],
});
const ruleSpec = (port: number) => ({ policy: "balance1", proto: "tcp", dest_port: String(port) });

interface Measured {
  readonly samples: number[];
  /** Plan lines ("plan ..." warnings) per reply, fewest seen. */
  readonly fewestPlanLines: number;
}

/** `n` dry runs, one after another (after 10 not measured), each checked for its plan. */
async function measure(
  n: number,
  send: (i: number) => Promise<{ status: number; warnings: readonly string[]; body: string }>,
  wanted: number,
): Promise<Measured> {
  for (let i = 0; i < 10; i += 1) await send(-1 - i);
  const samples: number[] = [];
  let fewest = Infinity;
  for (let i = 0; i < n; i += 1) {
    const started = performance.now();
    const reply = await send(i);
    samples.push(performance.now() - started);
    if (reply.status < 200 || reply.status >= 300) {
      throw new Error(`dry run answered HTTP ${reply.status}: ${reply.body.slice(0, 300)}`);
    }
    fewest = Math.min(fewest, reply.warnings.filter((w) => w.startsWith("plan ")).length);
  }
  if (fewest < wanted)
    throw new Error(`a dry run came back with ${fewest} plan lines, not ${wanted}`);
  return { samples, fewestPlanLines: fewest };
}

export async function benchDryRun(
  ctx: BenchContext,
  wanted: (id: string) => boolean,
): Promise<RowResult[]> {
  const { cluster, fleet } = ctx;
  const admin = cluster.adminClient();
  const serving = await cluster.plane.issueServingCertificate({ ips: ["127.0.0.1"] });
  const id = randomUUID().slice(0, 8);
  const logFile = path.join(ctx.workDir, "validate-admission-dry-run.log");
  await writeFile(logFile, "");
  /** The webhook's own time per review since `from` (its log's durationMs), and the log's length. */
  const handled = async (from: number): Promise<{ times: number[]; end: number }> => {
    const text = await readFile(logFile, "utf8");
    const times = text
      .slice(from)
      .split("\n")
      .map((line) => /"durationMs":(\d+)/.exec(line)?.[1])
      .filter((d): d is string => d !== undefined)
      .map(Number);
    return { times, end: text.length };
  };
  const namespace = await cluster.namespace("bench-dry-run", { [WEBHOOK_LABEL]: id });
  await admin.create(SECRETS, {
    metadata: { namespace, name: "sdewan-cnf-credentials" },
    stringData: { password: "" },
  });
  const server = await serveValidateAdmission({
    port: 0,
    host: "127.0.0.1",
    tls: { certFile: serving.certPath, keyFile: serving.keyPath },
    reader: kubeAdmissionReader(createKubeClient(cluster.adminKubeConfig())),
    kube: createKubeClient(cluster.adminKubeConfig()),
    env: { CNF_CREDENTIALS_SECRET: `${namespace}/sdewan-cnf-credentials` },
    runtime: new Runtime({
      logger: createLogger({
        level: "info",
        destination: pino.destination({ dest: logFile, sync: false }),
      }),
    }),
  });
  const webhook = await registerBenchWebhook(
    cluster,
    `${server.url}/`,
    "bench-dry-run",
    WEBHOOK_LABEL,
    id,
  );
  const { plane } = cluster;
  const raw = new RawApi(plane.server, plane.caPem, plane.admin.token, 4);
  try {
    const cnf = await fleet.createCnf(PURPOSE, { namespace, pods: 2 });
    const base = `/apis/${RULE_API_VERSION}/namespaces/${namespace}`;
    const rule = (name: string, spec: object) => ({
      apiVersion: RULE_API_VERSION,
      kind: "Mwan3Rule",
      metadata: { name, namespace, labels: LABELS },
      spec,
    });
    await admin.create(ruleResource(requireKind("Mwan3Policy")), {
      apiVersion: RULE_API_VERSION,
      kind: "Mwan3Policy",
      metadata: { name: "balance1", namespace, labels: LABELS },
      spec: policySpec(1),
    });
    for (let i = 0; i < DEPENDENTS; i += 1) {
      await raw.must("POST", `${base}/mwan3rules`, rule(`dep${i}`, ruleSpec(1000 + i)));
    }
    // The API server reaches the webhook once it has seen the configuration: dry-run until a plan comes.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const reply = await raw.request(
        "POST",
        `${base}/mwan3rules?dryRun=All`,
        rule("probe", ruleSpec(1)),
      );
      if (reply.warnings.some((w) => w.startsWith("plan "))) break;
      if (Date.now() > deadline) throw new Error("no dry run reached the webhook");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    ctx.log(`dry runs reach the webhook; CNF ${cnf.name} with 2 pods`);
    const n = ctx.quick ? 30 : 200;
    const rows: RowResult[] = [];
    if (wanted("dry-run-rule")) {
      const from = (await handled(0)).end;
      const m = await measure(
        n,
        (i) =>
          raw.request("POST", `${base}/mwan3rules?dryRun=All`, rule(`new${i}`, ruleSpec(2000))),
        3,
      );
      const p = percentiles(m.samples);
      const h = percentiles((await handled(from)).times);
      rows.push({
        id: "dry-run-rule",
        metric: `kubectl apply --dry-run=server of a new Mwan3Rule on a 2-pod CNF, through the API server (${n})`,
        target: "p99 <= 200 ms",
        measured: `p50 ${ms(p.p50)} p99 ${ms(p.p99)}; the webhook's own: p50 ${ms(h.p50)} p99 ${ms(h.p99)}`,
        counts: `each reply carried at least ${m.fewestPlanLines} plan lines (the rule, one per pod); per dry run the webhook read the policy, the CNF Deployment and Pods, asked one SubjectAccessReview, read the credentials Secret and GET the object on each pod`,
        checks: [atMost("p99", p.p99, 200)],
        values: { dryRuns: n, p50Ms: p.p50, p99Ms: p.p99 },
      });
    }
    if (wanted("dry-run-policy")) {
      const from = (await handled(0)).end;
      const m = await measure(
        n,
        (i) =>
          raw.request(
            "PATCH",
            `${base}/mwan3policies/balance1?dryRun=All`,
            { spec: policySpec(2 + (Math.abs(i) % 7)) },
            "application/merge-patch+json",
          ),
        4,
      );
      const p = percentiles(m.samples);
      const h = percentiles((await handled(from)).times);
      rows.push({
        id: "dry-run-policy",
        metric: `kubectl apply --dry-run=server of a Mwan3Policy change used by ${DEPENDENTS} Mwan3Rules, 2-pod CNF, through the API server (${n})`,
        target: "p99 <= 200 ms",
        measured: `p50 ${ms(p.p50)} p99 ${ms(p.p99)}; the webhook's own: p50 ${ms(h.p50)} p99 ${ms(h.p99)}`,
        counts: `each reply carried at least ${m.fewestPlanLines} plan lines (the policy, one per pod, the ${DEPENDENTS} rules using it on one line); the dependents are one list of Mwan3Rules`,
        checks: [atMost("p99", p.p99, 200)],
        values: { dryRuns: n, p50Ms: p.p50, p99Ms: p.p99, dependents: DEPENDENTS },
      });
    }
    return rows;
  } finally {
    raw.close();
    await webhook.remove();
    await server.close();
  }
}
