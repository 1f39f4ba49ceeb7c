// What the integration project's globalSetup/globalTeardown do: one control plane per test run,
// shared by every test file (each test works in its own namespace). Workers read the connection
// info from the JSON file named by SDEWAN_TEST_CLUSTER (set here; workers are forked afterwards).
//
// To reuse a running `npm run cluster:up` instead, set SDEWAN_TEST_CLUSTER=.cluster/cluster.json.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { apiRequest } from "../../../dev/control-plane/api.js";
import {
  type ControlPlane,
  type ControlPlaneInfo,
  startControlPlane,
} from "../../../dev/control-plane/control-plane.js";
import { CLUSTER_ENV, ownedControlPlane } from "./owned.js";
import { installServiceWritesPolicy } from "./service-writes-policy.js";

async function checkExternal(file: string): Promise<ControlPlaneInfo> {
  const info = JSON.parse(await readFile(file, "utf8")) as ControlPlaneInfo;
  const endpoint = { server: info.server, caPem: info.caPem, token: info.admin.token };
  const res = await apiRequest(endpoint, "/readyz").catch((error: unknown) => ({
    status: 0,
    body: String(error),
  }));
  if (res.status !== 200) {
    throw new Error(
      `${CLUSTER_ENV}=${file}: ${info.server}/readyz answered ${res.status} ${res.body}`,
    );
  }
  return info;
}

export async function setUp(): Promise<void> {
  const external = process.env[CLUSTER_ENV];
  if (external && ownedControlPlane.get() === undefined) {
    const info = await checkExternal(external);
    await installServiceWritesPolicy({
      server: info.server,
      caPem: info.caPem,
      token: info.admin.token,
    });
    return;
  }
  const verbose = process.env.SDEWAN_CLUSTER_VERBOSE === "1";
  const cp: ControlPlane = await startControlPlane({
    log: (line) => {
      if (verbose) process.stderr.write(`[control-plane] ${line}\n`);
    },
  });
  ownedControlPlane.set(cp);
  // Installed like the CRDs, so every test runs under it (test/integration/support/service-writes-policy.ts).
  await installServiceWritesPolicy(cp.endpoint());
  const file = path.join(cp.dir, "cluster.json");
  await writeFile(file, JSON.stringify(cp.info()), { mode: 0o600 });
  process.env[CLUSTER_ENV] = file;
  process.env.KUBECONFIG = cp.kubeconfigPath;
}

/** Stops the control plane setUp started; an external cluster (SDEWAN_TEST_CLUSTER) is left alone. */
export async function tearDown(): Promise<void> {
  const cp = ownedControlPlane.get();
  if (cp === undefined) return;
  ownedControlPlane.set(undefined);
  delete process.env[CLUSTER_ENV];
  await cp.stop();
}
