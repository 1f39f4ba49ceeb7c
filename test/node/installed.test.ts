// The project as a user installs it, on a real node (dev/node): our image as Pods pulled from the
// node's registry, the shipped manifests applied as they are, the steps the READMEs give.
import { mkdtemp, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { repoRoot } from "../../dev/control-plane/binaries.js";
import { waitFor } from "../e2e/world.js";
import {
  type InstalledWorld,
  openssl,
  progress,
  pushProjectImage,
  startInstalledWorld,
} from "./support/installed.js";

const manifests = (p: string): string => path.join(repoRoot, "manifests", p);
let world: InstalledWorld;

beforeAll(async () => {
  world = await startInstalledWorld();
  await pushProjectImage(world);
}, 900_000);

afterAll(async () => {
  await world?.node.stop();
}, 120_000);

interface Deployment {
  status?: { availableReplicas?: number; replicas?: number };
  spec: { replicas?: number };
}

async function available(namespace: string, name: string): Promise<string | undefined> {
  const d = await world.getJson<Deployment>(["-n", namespace, "deployment", name]);
  const want = d.spec.replicas ?? 1;
  return (d.status?.availableReplicas ?? 0) === want
    ? undefined
    : `${namespace}/${name}: ${d.status?.availableReplicas ?? 0}/${want} available`;
}

/** manifests/webhook/README.md, option B (a self-signed CA), step by step. */
async function installWebhookAsReadmeSays(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "sdewan-webhook-ca-"));
  await world.kubectl(["apply", "-f", manifests("webhook/deployment.yaml")]);
  await world.kubectl(["apply", "-f", manifests("webhook/rbac.yaml")]);
  await openssl([
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "365",
    "-subj",
    "/CN=validate-admission-ca",
    "-keyout",
    `${dir}/ca.key`,
    "-out",
    `${dir}/ca.crt`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign",
  ]);
  await openssl([
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "365",
    "-subj",
    "/CN=validate-admission.sdewan-system.svc",
    "-keyout",
    `${dir}/tls.key`,
    "-out",
    `${dir}/tls.crt`,
    "-CA",
    `${dir}/ca.crt`,
    "-CAkey",
    `${dir}/ca.key`,
    "-addext",
    "subjectAltName=DNS:validate-admission.sdewan-system.svc,DNS:validate-admission.sdewan-system.svc.cluster.local",
    "-addext",
    "extendedKeyUsage=serverAuth",
  ]);
  await world.kubectl([
    "-n",
    "sdewan-system",
    "create",
    "secret",
    "tls",
    "validate-admission-tls",
    "--cert",
    `${dir}/tls.crt`,
    "--key",
    `${dir}/tls.key`,
  ]);
  await world.kubectl(["apply", "-f", manifests("webhook/validating-webhook-configuration.yaml")]);
  const ca = (await readFile(`${dir}/ca.crt`)).toString("base64");
  const patch = [0, 1, 2, 3].map((i) => ({
    op: "add",
    path: `/webhooks/${i}/clientConfig/caBundle`,
    value: ca,
  }));
  await world.kubectl([
    "patch",
    "validatingwebhookconfiguration",
    "sdewan-validate-admission",
    "--type=json",
    "-p",
    JSON.stringify(patch),
  ]);
}

const ruleWithMissingZone = `apiVersion: batch.sdewan.akraino.org/v1alpha1
kind: FirewallRule
metadata: {name: no-zone, namespace: default, labels: {sdewanPurpose: cnf-1}}
spec: {src: nozone, dest: wan, target: ACCEPT}
`;

describe("installed on a real node", () => {
  it("the webhook Deployment serves the API server through its Service", async () => {
    const t = Date.now();
    await installWebhookAsReadmeSays();
    await waitFor(
      "webhook Available",
      () => available("sdewan-system", "validate-admission"),
      180_000,
      500,
    );
    progress(`validate-admission Available ${Date.now() - t} ms after kubectl apply`);
    // The configuration takes effect through the API server's informer: until then a dry run passes.
    let denial = "";
    await waitFor(
      "the webhook answers",
      async () => {
        try {
          await world.kubectl(["apply", "--dry-run=server", "-f", "-"], ruleWithMissingZone);
          return "admitted (configuration not yet in effect)";
        } catch (error) {
          denial = String(error);
          return denial.includes("admission webhook") ? undefined : denial;
        }
      },
      60_000,
      500,
    );
    expect(denial).toMatch(/sdewan policy "rule-dependencies" denied this request/);
  }, 300_000);

  it("the webhook scaled to 0: rule writes fail closed, deletes and CNF operations go on", async () => {
    await world.kubectl(
      ["apply", "-f", "-"],
      `apiVersion: batch.sdewan.akraino.org/v1alpha1
kind: FirewallZone
metadata: {name: lan, namespace: default, labels: {sdewanPurpose: cnf-1}}
spec: {network: [lan0], input: ACCEPT, output: ACCEPT, forward: ACCEPT}
`,
    );
    await world.kubectl([
      "-n",
      "sdewan-system",
      "scale",
      "deployment/validate-admission",
      "--replicas=0",
    ]);
    await waitFor(
      "no webhook endpoint",
      async () => {
        const slices = await world.getJson<{ items: { endpoints?: unknown[] }[] }>([
          "-n",
          "sdewan-system",
          "endpointslices",
          "-l",
          "kubernetes.io/service-name=validate-admission",
        ]);
        return slices.items.some((s) => (s.endpoints ?? []).length > 0)
          ? "endpoints left"
          : undefined;
      },
      60_000,
      500,
    );
    // failurePolicy Fail for rule kinds: a create cannot pass unchecked
    await expect(
      world.kubectl(["apply", "-f", "-"], ruleWithMissingZone.replace("nozone", "lan")),
    ).rejects.toThrow(/failed calling webhook "rules.validate-admission.sdewan.akraino.org"/);
    // an unlabelled rule's delete never calls the webhook (ADR 0010)
    await world.kubectl(["delete", "firewallzone", "lan", "--wait=false"]);
    await world.kubectl([
      "-n",
      "sdewan-system",
      "scale",
      "deployment/validate-admission",
      "--replicas=2",
    ]);
    await waitFor(
      "webhook back",
      () => available("sdewan-system", "validate-admission"),
      120_000,
      500,
    );
  }, 300_000);
});
