// The OpenFaaS CE path as far as it can lawfully run offline (docs/deploy.md): CE itself refuses to
// start without the Internet, by design. `faas-cli deploy -f stack.yml` against the recording
// stand-in, rendered into the objects CE creates by faas-netes CE's own code
// (npm run openfaas:render), applied to a real node; the connector (manifests/openfaas) delivers
// straight to the functions' Services, as the gateway would proxy to them.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "../../dev/control-plane/binaries.js";
import {
  cnfHolds,
  createSecret,
  peerFabric,
  type InstalledWorld,
  notAvailable,
  progress,
  pushProjectImage,
  pushSimulatorImage,
  readyPods,
  secretFile,
  startInstalledWorld,
  waitFor,
} from "./support/installed.js";

const run = promisify(execFile);
const NS = "sdewan-node";
const FN = "openfaas-fn";
const repo = (p: string): string => path.join(repoRoot, p);

let world: InstalledWorld;
let rendered = "";
let functions: string[] = [];

beforeAll(async () => {
  world = await startInstalledWorld();
  const out = path.join(world.scratch, "openfaas-ce");
  // stack.yml's defaults: REGISTRY docker.io/sdewan, TAG 0.1.0; the node's registry mirrors docker.io
  await run("npx", ["tsx", repo("dev/openfaas/main.ts"), "--out", out], { cwd: repoRoot });
  rendered = path.join(out, "functions.yaml");
  const docs = parseAllDocuments(await readFile(rendered, "utf8")).map(
    (d) =>
      d.toJSON() as {
        kind: string;
        metadata: { name: string };
        spec?: { template?: { spec?: { containers?: { image: string }[] } } };
      },
  );
  const deployments = docs.filter((d) => d.kind === "Deployment");
  functions = deployments.map((d) => d.metadata.name);
  const images = deployments.flatMap(
    (d) => d.spec?.template?.spec?.containers?.map((c) => c.image) ?? [],
  );
  // One image serves every function (FUNCTIONS picks); CE names one per function.
  await pushProjectImage(world, [...new Set(["sdewan-functions:0.1.0", ...images])]);
  await pushSimulatorImage(world);
}, 1_200_000);

afterAll(async () => {
  await world?.node.stop();
}, 180_000);

describe("OpenFaaS CE's objects, rendered by faas-netes, on a real node", () => {
  it("every function CE would create turns Ready under openfaas-fn/default", async () => {
    const t = Date.now();
    await world.kubectl(["apply", "--server-side", "-f", repo("manifests/crds/")]);
    await world.kubectl(["apply", "-k", repo("manifests/openfaas")]);
    // The connector's routes, as manifests/openfaas/connector.yaml says to create them.
    await world.kubectl([
      "-n",
      "sdewan-system",
      "create",
      "configmap",
      "sdewan-connector-config",
      `--from-file=config.yaml=${repo("manifests/connector/config.yaml")}`,
    ]);
    await world.kubectl(["apply", "-f", rendered]);
    // The Secrets stack.yml names, in openfaas-fn (faas-cli secret create would make them).
    const password = await secretFile(world, "cnf-password");
    await createSecret(
      world,
      FN,
      "sdewan-cnf-password",
      `--from-file=sdewan-cnf-password=${password}`,
    );
    const fabric = await peerFabric(world);
    await createSecret(world, FN, "clusterlink-peer-tls", `--from-file=${fabric}/identity`);
    // No gateway can run offline: the connector's routes go straight to each function's Service.
    const routes = functions
      .filter((f) => f !== "validate-admission" && f !== "clusterlink-authz")
      .map(
        (f) =>
          `CONNECTOR_ROUTE_${f.toUpperCase().replace(/-/g, "_")}_URL=http://${f}.${FN}.svc.cluster.local:8080/${f}`,
      );
    await world.kubectl([
      "-n",
      "sdewan-system",
      "set",
      "env",
      "deployment/sdewan-connector",
      ...routes,
    ]);
    await waitFor("functions Available", () => notAvailable(world, FN), 300_000, 1_000);
    await waitFor(
      "connector Available",
      () => notAvailable(world, "sdewan-system"),
      300_000,
      1_000,
    );
    progress(
      `OpenFaaS CE objects applied -> ${functions.length} functions and the connector Available: ${((Date.now() - t) / 1000).toFixed(1)} s`,
    );
    const pods = await world.getJson<{
      items: { spec: { serviceAccountName?: string; containers: { imagePullPolicy: string }[] } }[];
    }>(["-n", FN, "pods"]);
    // What CE does, now on a real kubelet: no per-function account, always pull
    expect(new Set(pods.items.map((p) => p.spec.serviceAccountName ?? "default"))).toEqual(
      new Set(["default"]),
    );
    expect(
      new Set(pods.items.flatMap((p) => p.spec.containers.map((c) => c.imagePullPolicy))),
    ).toEqual(new Set(["Always"]));
  }, 600_000);

  it("rules reach both CNF pods through the connector and the CE-rendered functions", async () => {
    const password = await readFile(path.join(world.scratch, "cnf-password"), "utf8");
    await world.kubectl(["create", "namespace", NS]);
    await createSecret(world, NS, "sdewan-cnf-credentials", `--from-literal=password=${password}`);
    const fabric = await peerFabric(world);
    await createSecret(world, NS, "peer-gateway-sim-tls", `--from-file=${fabric}/gateway`);
    await world.kubectl(["-n", NS, "apply", "-k", repo("test/node/fixtures")]);
    await waitFor("CNF Available", () => notAvailable(world, NS), 180_000, 500);
    const t = Date.now();
    for (const s of [
      "mwan3policy",
      "mwan3rule",
      "firewallzone",
      "firewallforwarding",
      "ipsecproposal",
    ]) {
      await world.kubectl(["-n", NS, "apply", "-f", repo(`manifests/samples/${s}.yaml`)]);
    }
    await waitFor(
      "samples on both CNF pods",
      async () => {
        const ready = await readyPods(world, NS, "app=cnf-1");
        if (ready.length !== 2) return `${ready.length}/2 CNF pods ready`;
        for (const pod of ready) {
          const held = await cnfHolds(world, NS, pod.metadata.name);
          for (const key of [
            "mwan3/policies/balance_1",
            "mwan3/rules/http_rule",
            "firewall/zones/lan1",
            "firewall/zones/wan1",
            "ipsec/proposals/proposal1",
          ]) {
            if (!held.has(key)) return `${pod.metadata.name} lacks ${key}`;
          }
        }
        return undefined;
      },
      180_000,
      500,
    );
    progress(
      `samples -> on both CNF pods through the CE-rendered functions: ${((Date.now() - t) / 1000).toFixed(1)} s`,
    );
  }, 420_000);
});
