/**
 * `npm run demo -- --node`: the same story on a real node (dev/node), as a user installs it. Our
 * image (the unmodified Dockerfile) and the simulators' are pushed to the node's registry,
 * manifests/plain is applied as docs/deploy.md says, the CNF runs as two Pods of the CNF
 * simulator; the samples are applied, a table shows where they are, one CNF pod is deleted and
 * the new one (new IP) is healed. Needs root; ~1 min with the images cached, +2 min to build them.
 */
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {
  applyFixtures,
  applySamples,
  cnfHolds,
  CNF_NAMESPACE,
  installPlain,
  pushProjectImage,
  pushSimulatorImage,
  readyPods,
  RULE_RESOURCES,
  setProgress,
  until,
  worldOf,
} from "../node/install.js";
import { type RealNode, startNode } from "../node/node.js";

interface Rule {
  kind: string;
  metadata: { name: string; generation: number };
  status?: { inSync?: boolean; observedGeneration?: number };
}

export interface NodeDemo {
  node?: RealNode;
}

export async function runNodeDemo(
  say: (line: string) => void,
  demo: NodeDemo,
  waitForCtrlC: (() => Promise<void>) | undefined,
): Promise<void> {
  setProgress(say);
  const scratch = await mkdtemp(path.join(os.tmpdir(), "sdewan-node-demo-"));
  let t = Date.now();
  const node = await startNode({ log: say });
  demo.node = node;
  const world = worldOf(node, scratch);
  await pushProjectImage(world);
  await pushSimulatorImage(world);
  say(`node up and images in its registry in ${((Date.now() - t) / 1000).toFixed(1)} s`);

  t = Date.now();
  await installPlain(world);
  say(
    `manifests/plain installed, every Deployment Available in ${((Date.now() - t) / 1000).toFixed(1)} s:`,
  );
  console.log(`\n${await world.kubectl(["-n", "sdewan-system", "get", "pods", "-o", "wide"])}\n`);
  await applyFixtures(world);
  t = Date.now();
  await applySamples(world);
  const cnfPods = async (): Promise<string[]> =>
    (await readyPods(world, CNF_NAMESPACE, "app=cnf-1")).map((p) => p.metadata.name);
  const pending = async (): Promise<string | undefined> => {
    const rules = await world.getJson<{ items: Rule[] }>(["-n", CNF_NAMESPACE, RULE_RESOURCES]);
    const behind = rules.items.filter(
      (r) => r.status?.inSync !== true || r.status.observedGeneration !== r.metadata.generation,
    );
    if (behind.length > 0) return `${behind.length}/${rules.items.length} rules not in sync`;
    const pods = await cnfPods();
    if (pods.length !== 2) return `${pods.length}/2 CNF pods ready`;
    const counts = await Promise.all(
      pods.map(async (p) => (await cnfHolds(world, CNF_NAMESPACE, p)).size),
    );
    return counts[0] === counts[1] && (counts[0] ?? 0) > 0
      ? undefined
      : `pods hold ${counts.join(" and ")} items`;
  };
  await until("the samples in sync on both CNF pods", pending, 180_000);
  say(
    `the samples are in sync on both CNF pods ${((Date.now() - t) / 1000).toFixed(1)} s after kubectl apply -k manifests/samples:`,
  );
  console.log(`\n${await world.kubectl(["-n", CNF_NAMESPACE, "get", RULE_RESOURCES])}\n`);
  for (const pod of await cnfPods()) {
    const held = await cnfHolds(world, CNF_NAMESPACE, pod);
    say(
      `CNF pod ${pod} holds ${held.size} items (${[...held.keys()].slice(0, 4).join(", ")}, ...)`,
    );
  }

  const [victim] = await readyPods(world, CNF_NAMESPACE, "app=cnf-1");
  if (victim !== undefined) {
    t = Date.now();
    await world.kubectl([
      "-n",
      CNF_NAMESPACE,
      "delete",
      "pod",
      victim.metadata.name,
      "--wait=false",
    ]);
    say(`deleted CNF pod ${victim.metadata.name} (${victim.status.podIP ?? "?"})`);
    await until(
      "the CNF healed",
      async () =>
        (await cnfPods()).includes(victim.metadata.name) ? "old pod still ready" : pending(),
      180_000,
    );
    const now = await readyPods(world, CNF_NAMESPACE, "app=cnf-1");
    say(
      `healed ${((Date.now() - t) / 1000).toFixed(1)} s after the delete: ` +
        now.map((p) => `${p.metadata.name} ${p.status.podIP ?? "?"}`).join(", "),
    );
  }
  if (waitForCtrlC !== undefined) {
    console.log(`export KUBECONFIG=${node.controlPlane.kubeconfigPath}`);
    console.log(`kubectl -n ${CNF_NAMESPACE} get ${RULE_RESOURCES}`);
    console.log("Running until Ctrl-C.");
    await waitForCtrlC();
  }
}
