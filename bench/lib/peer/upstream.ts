/**
 * The upstream SDEWAN controller (icn-sdwan platform/crd-ctrlr, built by `npm run upstream:build`)
 * as the peer rows run it, the way ../shared/tools/README.md found it runs on this machine:
 *
 * - its own control plane with its own CRDs (same group and plurals as ours, other schemas);
 * - a CNF Deployment -> one ReplicaSet -> two Pods labelled cnf-account-secret (the CNF password)
 *   and cnf-cert-secret (the CA of the CNF's serving certificate);
 * - per pod a CNF simulator on <pod IP>:80 and a TLS front on <pod IP>:443, because upstream
 *   speaks HTTPS to port 443 by host name <a-b-c-d>.<namespace>.pod.cluster.local, which a
 *   private /etc/hosts (a mount namespace of the manager's own, `unshare -m` + a bind mount)
 *   resolves to the loopback Pod IP;
 * - the webhook server's certificate in its temp dir (main.go always starts it; no webhook is
 *   registered with the API server), metrics on a loopback port, leader election off (default).
 *
 * API requests: controller-runtime's rest_client_requests_total from its metrics endpoint;
 * retries: its reconciles that ended in an error or a requeue (controller_runtime_reconcile_total).
 */
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { access, appendFile, copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import tls from "node:tls";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { startControlPlane, type ControlPlane } from "../../../dev/control-plane/control-plane.js";
import {
  createCertificateAuthority,
  issueCertificate,
  type IssuedCertificate,
} from "../../../dev/control-plane/certs.js";
import { startCnfSim } from "../../../dev/cnf-sim/index.js";
import {
  CNF_NETWORKS,
  CnfFleet,
  loopbackAddress,
  withFreshAddress,
} from "../../../dev/world/index.js";
import { KubeConfig } from "@kubernetes/client-node";
import { createKubeClient } from "../../../shared/kube/index.js";
import { NFN_NETWORK_ANNOTATION, PURPOSE_LABEL } from "../../../shared/kinds/index.js";
import { metricSum } from "../../soak/fleet.js";
import { REPO_ROOT, freePort } from "../child.js";
import type { BenchContext } from "../context.js";
import { RawApi } from "../raw-api.js";
import type { ListedRule } from "./rules.js";
import { writeDeploymentStatus, type PeerWorld } from "./world.js";

const run = promisify(execFile);

/** Where `npm run upstream:build` put the controller, or why it is not there. */
export type UpstreamBuild =
  | { readonly ok: true; readonly manager: string; readonly crdDir: string }
  | { readonly ok: false; readonly reason: string };

const CNF_PASSWORD = "bench-cnf-password";
const ACCOUNT_SECRET = "cnf-account";
const CA_SECRET = "cnf-ca";

export async function findUpstreamBuild(): Promise<UpstreamBuild> {
  const script = path.join(REPO_ROOT, "dev/upstream-ctrlr/build.sh");
  let dir: string;
  try {
    const { stdout } = await run("bash", [script, "--print-path"], { timeout: 30_000 });
    dir = stdout.trim().split("\n").at(-1) ?? "";
  } catch (error) {
    return { ok: false, reason: `${script} --print-path failed: ${String(error)}` };
  }
  const unavailable = await readFile(path.join(dir, "UNAVAILABLE"), "utf8").catch(() => undefined);
  if (unavailable !== undefined) return { ok: false, reason: unavailable.trim() };
  const manager = path.join(dir, "manager");
  const crdDir = path.join(dir, "crds");
  try {
    await access(manager);
    await access(crdDir);
  } catch {
    return { ok: false, reason: "not built: run `npm run upstream:build` (about 1 min cold)" };
  }
  return { ok: true, manager, crdDir };
}

/** A TLS front at ip:443 for the simulator at ip:80, with `cert` as its serving certificate. */
async function startTlsFront(ip: string, cert: IssuedCertificate): Promise<tls.Server> {
  const server = tls.createServer({ cert: cert.certPem, key: cert.keyPem }, (socket) => {
    const upstream = net.connect(80, ip);
    socket.pipe(upstream).pipe(socket);
    const end = (): void => {
      socket.destroy();
      upstream.destroy();
    };
    socket.on("error", end);
    upstream.on("error", end);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(443, ip, () => resolve());
  });
  return server;
}

function podHostName(ip: string, namespace: string): string {
  return `${ip.replaceAll(".", "-")}.${namespace}.pod.cluster.local`;
}

async function waitFor(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs: number,
  exited: () => string | undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    const how = exited();
    if (how !== undefined) throw new Error(`${what}: the upstream manager exited (${how})`);
    if (Date.now() > deadline) throw new Error(`${what}: not after ${timeoutMs} ms`);
    await delay(200);
  }
}

export async function startUpstreamWorld(
  ctx: BenchContext,
  build: Extract<UpstreamBuild, { ok: true }>,
  purpose: string,
): Promise<PeerWorld> {
  const stops: (() => Promise<unknown>)[] = [];
  const close = async (): Promise<void> => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    const plane: ControlPlane = await startControlPlane({
      crdDirs: [build.crdDir],
      log: (line) => ctx.log(`upstream control plane: ${line}`),
    });
    stops.push(() => plane.stop());
    const dir = path.join(ctx.workDir, "upstream");
    await mkdir(dir, { recursive: true });
    const raw = new RawApi(plane.server, plane.caPem, plane.admin.token);
    stops.push(() => Promise.resolve(raw.close()));
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(plane.kubeconfigPath);
    const kube = createKubeClient(kubeConfig);
    const namespace = "peer-upstream";
    await raw.must("POST", "/api/v1/namespaces", { metadata: { name: namespace } });

    const ca = await createCertificateAuthority(dir, "sdewan-bench-cnf-ca");
    const cnfCert = await issueCertificate(ca, dir, {
      name: "cnf",
      commonName: "sdewan-bench-cnf",
      usage: "server",
      dnsNames: [`*.${namespace}.pod.cluster.local`],
    });
    const b64 = (text: string): string => Buffer.from(text).toString("base64");
    const secrets = `/api/v1/namespaces/${namespace}/secrets`;
    await raw.must("POST", secrets, {
      metadata: { name: ACCOUNT_SECRET },
      data: { password: b64(CNF_PASSWORD) },
    });
    await raw.must("POST", secrets, {
      metadata: { name: CA_SECRET },
      data: { "ca.crt": b64(ca.certPem) },
    });

    // The manager's /etc/hosts: written before it starts, appended to in place (its bind mount
    // follows the inode) as pods get addresses.
    const hostsFile = path.join(dir, "hosts");
    await writeFile(hostsFile, "127.0.0.1 localhost\n::1 localhost\n");
    const fronts: tls.Server[] = [];
    stops.push(async () => {
      for (const front of fronts) await new Promise<void>((r) => front.close(() => r()));
    });
    const fleet = new CnfFleet(kube, {
      podEndpoint: () =>
        withFreshAddress(async () => {
          const ip = loopbackAddress();
          const sim = await startCnfSim({ host: ip, port: 80, password: CNF_PASSWORD });
          try {
            fronts.push(await startTlsFront(ip, cnfCert));
          } catch (error) {
            await sim.close();
            throw error;
          }
          await appendFile(hostsFile, `${ip} ${podHostName(ip, namespace)}\n`);
          return { ip, sim };
        }),
    });
    stops.push(() => fleet.close());
    const name = `cnf-${purpose}`;
    const templateLabels = {
      app: name,
      [PURPOSE_LABEL]: purpose,
      "cnf-account-secret": ACCOUNT_SECRET,
      "cnf-cert-secret": CA_SECRET,
    };
    const cnf = await fleet.createCnf(purpose, {
      namespace,
      pods: 2,
      deployment: {
        metadata: { name, labels: { [PURPOSE_LABEL]: purpose } },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: {
              labels: templateLabels,
              annotations: { [NFN_NETWORK_ANNOTATION]: CNF_NETWORKS },
            },
            spec: { containers: [{ name: "sdewan", image: "openwrt:sim" }] },
          },
        },
      },
    });
    await writeDeploymentStatus(kube, cnf, cnf.pods.length);

    // controller-runtime's default webhook certificate folder, under the manager's TMPDIR.
    const tmp = path.join(dir, "tmp");
    const certDir = path.join(tmp, "k8s-webhook-server", "serving-certs");
    await mkdir(certDir, { recursive: true });
    const webhookCert = await issueCertificate(ca, dir, {
      name: "webhook",
      commonName: "sdewan-bench-webhook",
      usage: "server",
      dnsNames: ["localhost"],
    });
    await copyFile(webhookCert.certPath, path.join(certDir, "tls.crt"));
    await copyFile(webhookCert.keyPath, path.join(certDir, "tls.key"));

    const metricsPort = await freePort();
    const logFile = path.join(ctx.workDir, "upstream-manager.log");
    const log = createWriteStream(logFile);
    const child = spawn(
      "unshare",
      [
        "-m",
        "--",
        "sh",
        "-c",
        'mount --bind "$0" /etc/hosts && exec "$1" --metrics-bind-address="127.0.0.1:$2"',
        hostsFile,
        build.manager,
        String(metricsPort),
      ],
      {
        cwd: dir,
        env: { ...process.env, KUBECONFIG: plane.kubeconfigPath, TMPDIR: tmp },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    child.stdout.pipe(log);
    child.stderr.pipe(log);
    // Should the bench itself end abruptly, the manager must not outlive it.
    const killOnExit = (): void => {
      child.kill("SIGKILL");
    };
    process.once("exit", killOnExit);
    let exitedHow: string | undefined;
    const exited = new Promise<void>((resolve) =>
      child.once("exit", (code, signal) => {
        exitedHow = signal ? `killed by ${signal}` : `exit code ${code}`;
        resolve();
      }),
    );
    stops.push(async () => {
      if (exitedHow === undefined) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
      process.off("exit", killOnExit);
    });
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    // Ready when both mwan3 controllers have started their workers (their caches are synced).
    await waitFor(
      async () => {
        const text = (await readFile(logFile, "utf8")).toLowerCase();
        const started = text.split("\n").filter((l) => l.includes("starting workers"));
        return ["mwan3policy", "mwan3rule"].every((c) =>
          started.some((l) => l.includes(`"${c}"`) || l.includes(`.${c}`)),
        );
      },
      `the upstream manager's mwan3 controllers (log: ${logFile})`,
      120_000,
      () => exitedHow,
    );
    ctx.log(`upstream manager ready (metrics ${metricsUrl}, log ${logFile})`);
    return {
      label: "upstream",
      namespace,
      purpose,
      cnf,
      fleet,
      raw,
      kube,
      isApplied: (rule: ListedRule) =>
        rule.status?.["state"] === "In Sync" &&
        rule.status["appliedGeneration"] === rule.metadata.generation,
      apiRequests: async () =>
        metricSum(await (await fetch(metricsUrl)).text(), "rest_client_requests_total"),
      retries: async () => {
        const text = await (await fetch(metricsUrl)).text();
        const total = (result: string): number =>
          metricSum(text, "controller_runtime_reconcile_total", `result="${result}"`);
        return total("error") + total("requeue") + total("requeue_after");
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
