// How long one review takes: in-process (handler only, and handler + its reads from the real API
// server) and end to end through the API server (a create with and without the webhook). Prints
// p50/p99; asserts only that a review stays far inside the webhook's 5 s timeout.
import { randomUUID } from "node:crypto";
import { createValidateAdmission } from "../../functions/validate-admission/index.js";
import { kubeAdmissionReader } from "../../shared/admission/index.js";
import type { AdmissionReader } from "../../shared/admission/observe.js";
import { createKubeClient } from "../../shared/kube/index.js";
import type { HandlerContext, Log } from "../../shared/runtime/function.js";
import { adminKubeConfig, newNamespace } from "./support/cluster.js";
import { startAdmissionHarness, type AdmissionHarness } from "./admission-harness.js";
import { rule, rules } from "./admission-clients.js";

const purpose = { sdewanPurpose: "cnf-a" };
const policySpec = { members: [{ network: "ovn-priv-net", metric: 1, weight: 1 }] };
const ruleSpec = { policy: "balance1", proto: "tcp", dest_port: "80" };
const proposalSpec = {
  encryption_algorithm: "aes128",
  hash_algorithm: "sha256",
  dh_group: "modp2048",
};

const silent: Log = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
};
const context = (): HandlerContext => ({
  correlationId: "latency",
  log: silent,
  calls: { api: 0, cnf: 0 },
  signal: new AbortController().signal,
});

function review(namespace: string) {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: randomUUID(),
      kind: { group: "batch.sdewan.akraino.org", version: "v1alpha1", kind: "Mwan3Rule" },
      resource: { group: "batch.sdewan.akraino.org", version: "v1alpha1", resource: "mwan3rules" },
      name: "r1",
      namespace,
      operation: "CREATE",
      userInfo: { username: "bob", groups: ["system:authenticated"] },
      object: {
        metadata: {
          name: "r1",
          namespace,
          labels: { ...purpose, "sdewan-bucket-type": "app-intent" },
        },
        spec: ruleSpec,
      },
      oldObject: null,
    },
  };
}

function percentiles(samples: number[]): { p50: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

async function timed(times: number, work: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < times; i += 1) {
    const started = performance.now();
    await work(i);
    samples.push(performance.now() - started);
  }
  return samples;
}

let harness: AdmissionHarness;
beforeAll(async () => {
  harness = await startAdmissionHarness();
}, 60_000);
afterAll(async () => {
  await harness?.close();
});

it("answers one review in well under the webhook timeout, in-process and through the API server", async () => {
  const admin = adminKubeConfig();
  const ns = await harness.namespace();
  await rules(admin, ns).create(rule("Mwan3Policy", "balance1", purpose, policySpec));
  // The bucket check reads bindings too: the heaviest common path.
  const memory: AdmissionReader = {
    listCnfDeployments: () => Promise.resolve([]),
    getRule: () =>
      Promise.resolve({
        kind: "Mwan3Policy",
        name: "balance1",
        purpose: "cnf-a",
        deleting: false,
        spec: policySpec,
      }),
    listRules: () => Promise.resolve([]),
    listRoleBindings: () => Promise.resolve([]),
    listClusterRoleBindings: () => Promise.resolve([]),
    getRole: () => Promise.resolve(null),
    mayGetSecret: () => Promise.resolve(false),
  };
  const pure = createValidateAdmission({ reader: () => memory });
  const liveReader = kubeAdmissionReader(createKubeClient(admin));
  const live = createValidateAdmission({ reader: () => liveReader });
  await timed(200, () => pure.handle(review(ns), context())); // warm-up
  const inProcess = percentiles(await timed(2000, () => pure.handle(review(ns), context())));
  const withReads = percentiles(await timed(100, () => live.handle(review(ns), context())));

  const plain = await newNamespace("latency-without-webhook");
  const create = (namespace: string) => (i: number) =>
    rules(admin, namespace).create(rule("IpsecProposal", `p${i}`, purpose, proposalSpec));
  const without = percentiles(await timed(100, create(plain)));
  const through = percentiles(await timed(100, create(ns)));
  const withReference = percentiles(
    await timed(100, (i) => rules(admin, ns).create(rule("Mwan3Rule", `r${i}`, purpose, ruleSpec))),
  );

  const row = (name: string, p: { p50: number; p99: number }) =>
    `${name.padEnd(52)} p50 ${p.p50.toFixed(2).padStart(8)} ms   p99 ${p.p99.toFixed(2).padStart(8)} ms`;
  process.stdout.write(
    [
      "validate-admission latency (one review)",
      row("in-process, policies only (2000 reviews)", inProcess),
      row("in-process, with reads from the API server", withReads),
      row("API server create, no webhook", without),
      row("API server create, through the webhook", through),
      row("  same, Mwan3Rule (the webhook reads its policy)", withReference),
      "",
    ].join("\n"),
  );
  expect(inProcess.p99).toBeLessThan(100);
  expect(through.p99).toBeLessThan(2_000);
}, 120_000);
