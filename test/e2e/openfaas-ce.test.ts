// The OpenFaaS path as far as it can lawfully run offline (issue 26): OpenFaaS CE refuses to start
// without Internet access (a licence control, never worked around), so the real faas-cli talks to
// the recording gateway stand-in (dev/openfaas/gateway.ts), whose deploys and Secrets faas-netes
// CE's own code answers and renders (dev/openfaas/build.sh). The test deploys every function of
// stack.yml that way, checks the Deployments and Services CE would create against stack.yml and
// against what CE is known to do (probes, service account, pull policy, its limits), and has the
// real API server accept them (server-side dry run). `npm run openfaas:render` writes the same
// objects to a file for a real node.
//
// Needs faas-cli and the renderer (Go and the shared tools' archives): outside CI it skips, saying
// why; in CI (CI=true) a missing tool is a failure.
import { spawnSync } from "node:child_process";
import { jest } from "@jest/globals";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { V1Deployment, V1Service } from "@kubernetes/client-node";
import { parse, parseAllDocuments, stringify } from "yaml";
import { startChild, waitForHttp, type Child } from "../../dev/demo/children.js";
import { apiRequest } from "../../dev/control-plane/api.js";
import { freePort } from "../../dev/control-plane/control-plane.js";
import { repoRoot } from "../../dev/control-plane/binaries.js";
import {
  FaasCli,
  FUNCTION_NAMESPACE_OBJECT,
  STACK_SECRETS,
  deployStack,
  toolAvailability,
  type StackDeploy,
} from "../../dev/openfaas/deploy-stack.js";
import { FUNCTION_NAMESPACE, RecordingGateway } from "../../dev/openfaas/gateway.js";
import type { KubeObject } from "../../dev/openfaas/provider.js";
import { endpoint } from "../integration/support/cluster.js";
import { inCi } from "../support/in-ci.js";
import { skipUnlessCi } from "./knative.js";

const faasCliTool = toolAvailability("dev/faas-cli/build.sh");
const rendererTool = toolAvailability("dev/openfaas/build.sh");
const { skip } = skipUnlessCi(inCi, faasCliTool.missing ?? rendererTool.missing);
if (skip !== undefined) console.warn(`OpenFaaS CE render e2e SKIPPED: ${skip}`);

// faas-cli's substitution of ${REGISTRY} and ${TAG} in stack.yml, with values of the test's own.
const REGISTRY = "registry.sdewan.test:5000/sdewan";
const TAG = "e2e-1";
const SECRETS_DIR = "/var/openfaas/secrets";

interface StackFunction {
  readonly image: string;
  readonly environment?: Record<string, string>;
  readonly secrets?: string[];
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly limits?: { memory?: string; cpu?: string };
  readonly requests?: { memory?: string; cpu?: string };
  readonly readonly_root_filesystem?: boolean;
}

const stackText = readFileSync(path.join(repoRoot, "stack.yml"), "utf8").replace(
  /\$\{(\w+):-([^}]*)\}/g,
  (_, name: string, fallback: string) =>
    ({ REGISTRY, TAG })[name as "REGISTRY" | "TAG"] ?? fallback,
);
const stack = (parse(stackText) as { functions: Record<string, StackFunction> }).functions;
const STACK_NAMES = Object.keys(stack).sort();

let run: StackDeploy | undefined;
const deployed = (): StackDeploy => {
  if (run === undefined) throw new Error("stack.yml was not deployed");
  return run;
};

const objectsOf = (name: string): { deployment: V1Deployment; service: V1Service } => {
  const fn = deployed().gateway.functions.find((f) => f.name === name);
  const deployment = fn?.objects.find((o) => o.kind === "Deployment") as V1Deployment | undefined;
  const service = fn?.objects.find((o) => o.kind === "Service") as V1Service | undefined;
  if (deployment === undefined || service === undefined) throw new Error(`${name} not rendered`);
  return { deployment, service };
};
const containerOf = (name: string) => {
  const container = objectsOf(name).deployment.spec?.template.spec?.containers[0];
  if (container === undefined) throw new Error(`${name}: no container`);
  return container;
};

(skip === undefined ? describe : describe.skip)(
  "faas-cli deploy -f stack.yml, answered and rendered by faas-netes CE's own code",
  () => {
    jest.setTimeout(180_000);

    beforeAll(async () => {
      run = await deployStack({
        faasCli: faasCliTool.binary,
        renderer: rendererTool.binary,
        stackFile: path.join(repoRoot, "stack.yml"),
        env: { REGISTRY, TAG },
      });
    });
    afterAll(async () => {
      await run?.close();
    });

    it("faas-cli login saves the credentials the stand-in checks; a wrong password is refused with 401", async () => {
      expect(deployed().login.status).toBe(0);
      expect(deployed().login.stdout).toContain("credentials saved for admin");
      const stranger = new FaasCli(faasCliTool.binary, deployed().gateway.url);
      try {
        const refused = await stranger.login("admin", "not-the-password");
        expect(refused.status).not.toBe(0);
        expect(refused.stdout + refused.stderr).toMatch(
          /unable to login, either username or password is incorrect/i,
        );
        // Nor may anything be deployed without logging in.
        const anonymous = await stranger.deploy(path.join(repoRoot, "stack.yml"));
        expect(anonymous.status).not.toBe(0);
        expect(anonymous.stdout).toContain('unauthorized access, run "faas-cli login"');
      } finally {
        stranger.dispose();
      }
      const logins = deployed().gateway.requests.filter((r) => r.path === "/system/functions");
      expect(logins.map((r) => r.status)).toEqual(expect.arrayContaining([200, 401]));
      // The record names the user, never the password.
      expect(JSON.stringify(deployed().gateway.requests)).not.toContain("not-the-password");
    });

    it("deploys every function of stack.yml as CE answers faas-cli: PUT 404 (not there yet), then POST 202", () => {
      expect(deployed().deploy.status).toBe(0);
      expect(
        deployed()
          .gateway.functions.map((f) => f.name)
          .sort(),
      ).toEqual(STACK_NAMES);
      for (const name of STACK_NAMES) {
        const calls = deployed()
          .gateway.requests.filter(
            (r) =>
              r.path === "/system/functions" &&
              (r.body as { service?: string } | undefined)?.service === name,
          )
          .filter((r) => r.user === "admin")
          .map((r) => `${r.method} ${r.status}`);
        expect([name, calls]).toEqual([name, ["PUT 404", "POST 202"]]);
      }
    });

    it("each function is a Deployment of its stack.yml image in openfaas-fn, with its env, resources and replicas", () => {
      for (const name of STACK_NAMES) {
        const fn = stack[name] as StackFunction;
        const { deployment } = objectsOf(name);
        const container = containerOf(name);
        expect([name, deployment.metadata?.namespace]).toEqual([name, FUNCTION_NAMESPACE]);
        expect([name, container.image]).toEqual([name, `${REGISTRY}/${name}:${TAG}`]);
        // CE sorts the environment by name and adds nothing (no PORT: the image's 8080 holds).
        const env = Object.entries(fn.environment ?? {})
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([n, value]) => ({ name: n, value }));
        expect([name, container.env]).toEqual([name, env]);
        expect([name, container.resources]).toEqual([
          name,
          { limits: fn.limits ?? {}, requests: fn.requests ?? {} },
        ]);
        expect([name, deployment.spec?.replicas]).toEqual([
          name,
          Number(fn.labels?.["com.openfaas.scale.min"] ?? "1"),
        ]);
        // CE hardcodes imagePullPolicy Always (functions.imagePullPolicy is Pro-only): the node
        // must reach a registry holding the image.
        expect([name, container.imagePullPolicy]).toEqual([name, "Always"]);
      }
    });

    it("projects each listed Secret's keys under /var/openfaas/secrets/, where the functions' env points", () => {
      const withSecrets = STACK_NAMES.filter((n) => (stack[n]?.secrets ?? []).length > 0);
      expect(withSecrets.length).toBeGreaterThan(0);
      for (const name of withSecrets) {
        const fn = stack[name] as StackFunction;
        const spec = objectsOf(name).deployment.spec?.template.spec;
        const volume = spec?.volumes?.find((v) => v.name === `${name}-projected-secrets`);
        const sources = (volume?.projected?.sources ?? []).map((s) => ({
          name: s.secret?.name,
          keys: (s.secret?.items ?? []).map((i) => i.key).sort(),
        }));
        const expected = (fn.secrets ?? []).map((s) => ({
          name: s,
          keys: [...(STACK_SECRETS.find((k) => k.name === s)?.keys ?? [])].sort(),
        }));
        expect([name, sources]).toEqual([name, expected]);
        expect([name, containerOf(name).volumeMounts]).toEqual([
          name,
          expect.arrayContaining([
            { name: `${name}-projected-secrets`, readOnly: true, mountPath: SECRETS_DIR },
          ]),
        ]);
        const files = expected.flatMap((s) => s.keys.map((k) => `${SECRETS_DIR}/${k}`));
        const env = fn.environment ?? {};
        if (env["CNF_PASSWORD_FILE"] !== undefined) {
          expect([name, files]).toEqual([name, expect.arrayContaining([env["CNF_PASSWORD_FILE"]])]);
        }
        if (env["CL_PEER_TLS_DIR"] !== undefined) {
          expect(env["CL_PEER_TLS_DIR"]).toBe(SECRETS_DIR);
          for (const file of ["ca.crt", "tls.crt", "tls.key"]) {
            expect([name, files]).toEqual([
              name,
              expect.arrayContaining([`${SECRETS_DIR}/${file}`]),
            ]);
          }
        }
      }
    });

    it("probes GET /_/health on 8080 for readiness and liveness: CE ignores com.openfaas.ready.http.path", () => {
      for (const name of STACK_NAMES) {
        const container = containerOf(name);
        const annotations = objectsOf(name).deployment.spec?.template.metadata?.annotations ?? {};
        // The annotation reaches the pod, but not the probe.
        expect([name, annotations["com.openfaas.ready.http.path"]]).toEqual([name, "/_/ready"]);
        for (const probe of [container.readinessProbe, container.livenessProbe]) {
          expect([name, probe]).toEqual([
            name,
            {
              httpGet: { path: "/_/health", port: 8080 },
              initialDelaySeconds: 2,
              timeoutSeconds: 1,
              periodSeconds: 2,
              successThreshold: 1,
              failureThreshold: 3,
            },
          ]);
        }
        expect([name, container.ports]).toEqual([
          name,
          [{ name: "http", containerPort: 8080, protocol: "TCP" }],
        ]);
      }
    });

    it("runs every function as openfaas-fn/default: com.openfaas.serviceaccount is copied, not used", () => {
      for (const name of STACK_NAMES) {
        const template = objectsOf(name).deployment.spec?.template;
        expect([name, template?.metadata?.annotations?.["com.openfaas.serviceaccount"]]).toEqual([
          name,
          `sdewan-${name}`,
        ]);
        expect([name, template?.spec?.serviceAccountName]).toEqual([name, undefined]);
      }
    });

    it("keeps the root file system read-only with a writable /tmp, and sets no user: the image's 1000 holds", () => {
      for (const name of STACK_NAMES) {
        const spec = objectsOf(name).deployment.spec?.template.spec;
        const container = containerOf(name);
        expect([name, container.securityContext]).toEqual([name, { readOnlyRootFilesystem: true }]);
        expect([name, spec?.volumes]).toEqual([
          name,
          expect.arrayContaining([{ name: "temp", emptyDir: {} }]),
        ]);
        expect([name, container.volumeMounts]).toEqual([
          name,
          expect.arrayContaining([{ name: "temp", mountPath: "/tmp" }]),
        ]);
        expect([name, spec?.securityContext]).toEqual([name, undefined]);
      }
      // What keeps the pods non-root: the image's numeric USER.
      expect(readFileSync(path.join(repoRoot, "Dockerfile"), "utf8")).toMatch(/^USER 1000:1000$/m);
    });

    it("gives each function a ClusterIP Service on 8080 selecting its pods", () => {
      for (const name of STACK_NAMES) {
        const { service, deployment } = objectsOf(name);
        expect([name, service.spec?.type, service.spec?.selector]).toEqual([
          name,
          "ClusterIP",
          { faas_function: name },
        ]);
        expect([name, service.spec?.ports]).toEqual([
          name,
          [{ name: "http", protocol: "TCP", port: 8080, targetPort: 8080 }],
        ]);
        expect(deployment.spec?.template.metadata?.labels?.["faas_function"]).toBe(name);
      }
    });

    it("the API server accepts every rendered object as it stands (server-side dry run, strict fields)", async () => {
      const api = endpoint();
      const created = await apiRequest(api, "/api/v1/namespaces", {
        method: "POST",
        body: JSON.stringify(FUNCTION_NAMESPACE_OBJECT),
      });
      expect([201, 409]).toContain(created.status);
      const collection = (o: KubeObject): string =>
        o.kind === "Deployment"
          ? `/apis/apps/v1/namespaces/${FUNCTION_NAMESPACE}/deployments`
          : `/api/v1/namespaces/${FUNCTION_NAMESPACE}/services`;
      const objects = deployed().gateway.objects;
      expect(objects).toHaveLength(STACK_NAMES.length * 2);
      for (const object of objects) {
        const res = await apiRequest(
          api,
          `${collection(object)}?dryRun=All&fieldValidation=Strict`,
          { method: "POST", body: JSON.stringify(object) },
        );
        expect([
          `${object.kind}/${object.metadata.name}`,
          res.status,
          res.status === 201 ? "" : res.body,
        ]).toEqual([`${object.kind}/${object.metadata.name}`, 201, ""]);
      }
    });

    it("the image's server answers CE's probe with the rendered environment", async () => {
      // The image listens on PORT=8080 (Dockerfile ENV), the port CE probes; here on a free one.
      expect(readFileSync(path.join(repoRoot, "Dockerfile"), "utf8")).toMatch(/^\s+PORT=8080$/m);
      const container = containerOf("reconcile-rule");
      const probe = container.readinessProbe?.httpGet?.path ?? "";
      const port = await freePort();
      const work = mkdtempSync(path.join(os.tmpdir(), "sdewan-ce-probe-"));
      const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value ?? ""]));
      let child: Child | undefined;
      try {
        child = startChild(
          "reconcile-rule",
          "functions/server.ts",
          [],
          { ...env, HOST: "127.0.0.1", PORT: String(port) },
          path.join(work, "server.log"),
        );
        await waitForHttp(`http://127.0.0.1:${port}${probe}`, child, 60_000);
        const res = await fetch(`http://127.0.0.1:${port}${probe}`, {
          headers: { "user-agent": "kube-probe/1.36" },
        });
        expect(res.status).toBe(200);
      } finally {
        await child?.stop();
        rmSync(work, { recursive: true, force: true });
      }
    });

    it("npm run openfaas:render writes those objects, the namespace first, to a file for the node", () => {
      const out = mkdtempSync(path.join(os.tmpdir(), "sdewan-openfaas-render-"));
      try {
        const result = spawnSync(
          process.execPath,
          ["--import", "tsx", "dev/openfaas/main.ts", "--out", out],
          {
            cwd: repoRoot,
            encoding: "utf8",
            env: { ...process.env, REGISTRY, TAG },
            timeout: 150_000,
          },
        );
        expect([result.status, result.stderr.slice(-2000)]).toEqual([0, expect.any(String)]);
        const docs = parseAllDocuments(readFileSync(path.join(out, "functions.yaml"), "utf8")).map(
          (d) => d.toJS() as KubeObject,
        );
        expect(docs[0]).toEqual(FUNCTION_NAMESPACE_OBJECT);
        const byName = (o: KubeObject): string => `${o.kind}/${o.metadata.name}`;
        expect(docs.slice(1).map(byName).sort()).toEqual(
          deployed().gateway.objects.map(byName).sort(),
        );
        const requests = readFileSync(path.join(out, "requests.json"), "utf8");
        expect(JSON.parse(requests)).toEqual(
          expect.arrayContaining([expect.objectContaining({ method: "POST", status: 202 })]),
        );
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    });
  },
);

(skip === undefined ? describe : describe.skip)("the gateway stand-in answers as CE does", () => {
  jest.setTimeout(120_000);
  const password = "stand-in-test-password";
  let gateway: RecordingGateway;
  let faasCli: FaasCli;
  let work: string;

  beforeAll(async () => {
    gateway = await RecordingGateway.start({ renderer: rendererTool.binary, password });
    faasCli = new FaasCli(faasCliTool.binary, gateway.url);
    work = mkdtempSync(path.join(os.tmpdir(), "sdewan-ce-limits-"));
    expect((await faasCli.login("admin", password)).status).toBe(0);
  });
  afterAll(async () => {
    faasCli.dispose();
    await gateway.close();
    rmSync(work, { recursive: true, force: true });
  });

  const writeStack = (file: string, functions: Record<string, object>): string => {
    const stackFile = path.join(work, file);
    // faas-cli wants the number 1.0, which a YAML writer prints as 1.
    writeFileSync(
      stackFile,
      `version: 1.0\n${stringify({ provider: { name: "openfaas", gateway: gateway.url }, functions })}`,
    );
    return stackFile;
  };

  it("listens on loopback only", async () => {
    await expect(
      RecordingGateway.start({ renderer: rendererTool.binary, password, host: "0.0.0.0" }),
    ).rejects.toThrow("loopback only");
  });

  it("faas-cli secret create: 202 and the Secret faas-netes makes; a second time 409; the value is never recorded", async () => {
    const value = "s3cret-value-for-the-stand-in";
    const create = () =>
      faasCli.run([
        "secret",
        "create",
        "e2e-secret",
        "--from-literal",
        value,
        "--gateway",
        gateway.url,
      ]);
    expect((await create()).stdout).toContain("Created: 202 Accepted");
    expect((await create()).stdout).toContain('secret with the name "e2e-secret" already exists');
    const secret = gateway.secretObjects.find((s) => s.metadata.name === "e2e-secret");
    expect(secret).toMatchObject({
      metadata: {
        namespace: FUNCTION_NAMESPACE,
        labels: { "app.kubernetes.io/managed-by": "openfaas" },
      },
      type: "Opaque",
      data: { "e2e-secret": Buffer.from(value).toString("base64") },
    });
    const recorded = JSON.stringify(gateway.requests);
    expect(recorded).not.toContain(value);
    expect(recorded).not.toContain(Buffer.from(value).toString("base64"));
    expect(recorded).not.toContain(password);
    expect(
      gateway.requests.filter((r) => r.path === "/system/secrets").map((r) => r.status),
    ).toEqual([202, 409]);
  });

  it("refuses what CE refuses: a missing Secret, scale.max over 5, a 16th function", async () => {
    const functions: Record<string, object> = {};
    for (let i = 1; i <= 16; i++) {
      functions[`fn-${String(i).padStart(2, "0")}`] = { image: `127.0.0.1:5000/fn:${i}` };
    }
    functions["needs-secret"] = { image: "127.0.0.1:5000/fn:1", secrets: ["no-such-secret"] };
    functions["too-wide"] = {
      image: "127.0.0.1:5000/fn:1",
      labels: { "com.openfaas.scale.max": "6" },
    };
    const result = await faasCli.deploy(writeStack("limits.yml", functions));
    expect(result.status).not.toBe(0);
    expect(result.stdout).toContain('unable to fetch secrets: secrets "no-such-secret" not found');
    expect(result.stdout).toContain(
      "validation failed: com.openfaas.scale.max is set too high for Community Edition",
    );
    expect(result.stdout).toContain("unable to create function, maximum: 15");
    // 15 of the 16 plain functions (whichever faas-cli sent first), and none of the others.
    expect(gateway.functions.map((f) => f.name).filter((n) => n.startsWith("fn-"))).toHaveLength(
      15,
    );
    expect(gateway.functions.map((f) => f.name)).not.toEqual(
      expect.arrayContaining(["needs-secret"]),
    );
  });

  it("faas-cli remove: 202, and the function is gone (a second remove is 404)", async () => {
    const [first] = gateway.functions;
    if (first === undefined) throw new Error("nothing deployed");
    await faasCli.run(["remove", first.name, "--gateway", gateway.url]);
    expect(gateway.functions.map((f) => f.name)).not.toContain(first.name);
    await faasCli.run(["remove", first.name, "--gateway", gateway.url]);
    const deletes = gateway.requests.filter((r) => r.method === "DELETE");
    expect(deletes.map((r) => r.status)).toEqual([202, 404]);
  });
});
