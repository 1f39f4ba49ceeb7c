// NetworkPolicy judged by cyclonus on a real node (issue 31, section 3): manifests/plain installed
// (network-policy-sync and the node agent among it), then cyclonus v0.5.6's own command,
// `cyclonus generate`, creates its namespaces x, y, z with Pods a, b, c of agnhost (built from
// k8s.io/kubernetes/test/images/agnhost, dev/node/build.sh), applies each generated case's
// NetworkPolicies and labels with the API, and probes every Pod pair through the pods/exec
// subresource (`kubectl exec ... -- /agnhost connect`), TCP and UDP, comparing each connection with
// its own truth table. A failed case must be one cyclonus itself gets wrong (its NotIn on a missing
// key, shown by our reference evaluator with and without that reading); any other fails the test.
// Then section 4's numbers through the node: a policy write until the node's packet filter holds it.
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { referenceAllows } from "../../dev/netpol-oracle/reference.js";
import { buildScratchImage, registryHas } from "../../dev/node/images.js";
import { nodeLayout } from "../../dev/node/layout.js";
import {
  buildScript,
  type InstalledWorld,
  installPlain,
  progress,
  pushProjectImage,
  startInstalledWorld,
  until,
} from "./support/installed.js";
import {
  cyclonusVerdicts,
  type GeneratedCase,
  generatedCases,
  judged,
} from "../unit/netpol/cyclonus-oracle.js";
import { cyclonusArgs, parseCyclonusRun, type CyclonusRun } from "./support/cyclonus-run.js";
import { percentiles } from "../../bench/lib/stats.js";
import { pollUntil } from "../../dev/control-plane/api.js";

/** cyclonus names agnhost `<registry>/e2e-test-images/agnhost:2.43`; ours is built here. */
const AGNHOST_REGISTRY = `${nodeLayout.registry}/agnhost-k8s-v1.36.3`;
const AGENT = "sdewan-netpol-node-agent";

let world: InstalledWorld;
let cyclonus = "";
const numbers: string[] = [];
const measured = (line: string): void => {
  numbers.push(line);
  progress(line);
};
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

beforeAll(async () => {
  world = await startInstalledWorld();
  const oracle = await buildScript("dev/netpol-oracle/build-cyclonus.sh");
  cyclonus = path.join(path.dirname(oracle), "cyclonus");
  await pushProjectImage(world);
  const agnhost = `${AGNHOST_REGISTRY}/e2e-test-images/agnhost:2.43`;
  if (!(await registryHas(agnhost))) {
    await buildScratchImage(world.node.binaries.crane, {
      reference: agnhost,
      files: [[world.node.binaries.agnhost, "/agnhost"]],
      entrypoint: ["/agnhost"],
      user: "0:0",
    });
  }
  const t = Date.now();
  await installPlain(world);
  await world.kubectl([
    "-n",
    "sdewan-system",
    "rollout",
    "status",
    `daemonset/${AGENT}`,
    "--timeout=180s",
  ]);
  measured(`manifests/plain installed, the node agent Ready: ${seconds(Date.now() - t)}`);
}, 1_800_000);

afterAll(async () => {
  process.stderr.write(`\ncyclonus on the node, measured:\n  ${numbers.join("\n  ")}\n`);
  await world?.node.stop();
}, 180_000);

/** Runs `cyclonus generate` against the node; its output goes to a file, progress to ours. */
async function runCyclonus(args: readonly string[]): Promise<CyclonusRun> {
  const log = path.join(world.scratch, "cyclonus.log");
  const junit = path.join(world.scratch, "cyclonus-junit.xml");
  const out = createWriteStream(log);
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(cyclonus, [...args, "--junit-results-file", junit], {
      env: { ...process.env, KUBECONFIG: world.node.controlPlane.kubeconfigPath },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let partial = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out.write(chunk);
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines)
        if (/^(finished policy|testing \d+ cases)/.test(line)) progress(line);
    });
    child.stderr.on("data", (chunk: Buffer) => out.write(chunk));
    child.on("error", reject);
    child.on("close", resolve);
  });
  out.end();
  const text = await readFile(log, "utf8");
  if (code !== 0) throw new Error(`cyclonus exited ${code}; its log: ${log}\n${text.slice(-3000)}`);
  progress(`cyclonus's log: ${log}`);
  return parseCyclonusRun(text, await readFile(junit, "utf8"));
}

/**
 * Why cyclonus's expectation for a case is not Kubernetes's, if it is its NotIn reading: some
 * connection of the case where cyclonus's matcher and our reference under cyclonus's reading agree
 * and the reference under Kubernetes's reading does not.
 */
function cyclonusOwnMistake(testCase: GeneratedCase | undefined): string | undefined {
  if (testCase === undefined) return undefined;
  const runs = testCase.steps.map((step) => judged(step));
  const verdicts = cyclonusVerdicts(runs);
  for (const [i, run] of runs.entries()) {
    for (const [j, packet] of run.packets.entries()) {
      const expected = verdicts[i]?.[j];
      const kubernetes = referenceAllows(run.world, packet);
      const cyclonusReading = referenceAllows(run.world, packet, { notInMatchesMissingKey: false });
      if (expected !== kubernetes && expected === cyclonusReading) {
        return `step ${i + 1}: ${packet.namespace}/${packet.pod} ${packet.direction} ${packet.peerIP} ${packet.protocol}/${packet.port}: cyclonus expects ${expected}, Kubernetes ${kubernetes} (NotIn on a missing key)`;
      }
    }
  }
  return undefined;
}

describe("cyclonus generate against the real node, manifests/plain's node agent enforcing", () => {
  it("every generated case passes, but those cyclonus itself gets wrong", async () => {
    const t = Date.now();
    const run = await runCyclonus(cyclonusArgs(AGNHOST_REGISTRY, process.env));
    const byDescription = new Map(generatedCases().map((c) => [c.description, c]));
    const explained: string[] = [];
    const unexplained: string[] = [];
    for (const failed of run.cases.filter((c) => !c.passed)) {
      const why = cyclonusOwnMistake(byDescription.get(failed.name));
      (why === undefined ? unexplained : explained).push(`${failed.name}: ${why ?? "no reason"}`);
    }
    const passed = run.cases.filter((c) => c.passed).length;
    measured(
      `cyclonus generate: ${run.cases.length} cases, ${passed} passed, ${run.cases.length - passed} failed ` +
        `(${explained.length} cyclonus's NotIn reading); Pod pairs as expected ${run.right}, not ${run.wrong}, ` +
        `ignored ${run.ignored} (loopback); connections as expected: TCP ${run.tcp.same}/${run.tcp.probed}, ` +
        `UDP ${run.udp.same}/${run.udp.probed}; ${seconds(Date.now() - t)}`,
    );
    for (const line of explained) measured(`  explained: ${line}`);
    expect(unexplained).toEqual([]);
    expect(run.cases.length).toBeGreaterThan(0);
    expect(run.right).toBeGreaterThan(0);
  }, 3_600_000);

  it("a NetworkPolicy written reaches the node's packet filter (write -> enforced)", async () => {
    // cyclonus leaves x, y, z and their Pods; x/a is the endpoint, its ingress map entry the proof.
    const pod = JSON.parse(await world.kubectl(["-n", "x", "get", "pod", "a", "-o", "json"])) as {
      status: { podIP: string };
    };
    const ip = pod.status.podIP;
    const inMap = async (): Promise<boolean> =>
      (
        await world.node.inNode(["nft", "list", "map", "inet", "sdewan_netpol", "pod_ingress"])
      ).includes(`${ip} :`);
    const policy = (name: string): string =>
      `apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: ${name}, namespace: x}\n` +
      `spec: {podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress]}\n`;
    await world.kubectl(["-n", "x", "delete", "networkpolicy", "--all"]);
    await until("x/a open", async () => ((await inMap()) ? "still in the map" : undefined), 60_000);
    // Polled as fast as nft answers (each look is a process in the node's namespace, ~10-30 ms).
    const whenMap = (holds: boolean): Promise<boolean> =>
      pollUntil(
        async () => ((await inMap()) === holds ? true : undefined),
        () => `x/a ${holds ? "in" : "out of"} the ingress map`,
        { timeoutMs: 60_000, intervalMs: 1 },
      );
    const enforced: number[] = [];
    const afterWrite: number[] = [];
    const opened: number[] = [];
    for (let i = 0; i < 20; i += 1) {
      const t = Date.now();
      await world.kubectl(["apply", "-f", "-"], policy(`deny-${i}`));
      const written = Date.now();
      await whenMap(true);
      enforced.push(Date.now() - t);
      afterWrite.push(Date.now() - written);
      const d = Date.now();
      await world.kubectl(["-n", "x", "delete", "networkpolicy", `deny-${i}`, "--wait=false"]);
      await whenMap(false);
      opened.push(Date.now() - d);
    }
    const summary = (xs: number[]): string => {
      const p = percentiles(xs);
      return `p50 ${p.p50} ms, p99 ${p.p99} ms (n ${p.n})`;
    };
    measured(
      `NetworkPolicy create (kubectl apply started) -> x/a's ingress chain in the node's nft map: ${summary(enforced)}; ` +
        `from kubectl's return: ${summary(afterWrite)}`,
    );
    measured(`NetworkPolicy delete -> x/a out of the map: ${summary(opened)}`);
    const metrics = await world.node.inNode(["curl", "-s", `http://127.0.0.1:9910/metrics`]);
    const metric = (name: string): string =>
      metrics
        .split("\n")
        .filter((l) => l.startsWith(name))
        .join("; ");
    measured(`agent: ${metric("sdewan_netpol_agent_ruleset")}`);
    measured(`agent: ${metric("sdewan_netpol_agent_process_")}; now ${Date.now() / 1000}`);
    measured(`agent: ${metric("sdewan_netpol_agent_sync_seconds_sum")}`);
    expect(enforced).toHaveLength(20);
  }, 600_000);
});
