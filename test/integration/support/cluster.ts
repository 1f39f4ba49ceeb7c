// Helpers for integration tests: connection info of the run's control plane (started by
// global-setup.ts), KubeConfigs for the admin and declared users, and a namespace per test.
import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import type { ApiEndpoint } from "../../../dev/control-plane/api.js";
import {
  ADMIN_USER,
  type ControlPlaneInfo,
  issueServingCertificate,
  type ServingCertificateRequest,
  userFromInfo,
} from "../../../dev/control-plane/control-plane.js";
import type { IssuedCertificate } from "../../../dev/control-plane/certs.js";
import { CLUSTER_ENV } from "./owned.js";

let cached: ControlPlaneInfo | undefined;

/** Connection info of the shared control plane; fails clearly outside the integration project. */
export function clusterInfo(): ControlPlaneInfo {
  if (cached !== undefined) return cached;
  const file = process.env[CLUSTER_ENV];
  if (!file) {
    throw new Error(
      `${CLUSTER_ENV} is not set: integration tests need the jest "integration" project's globalSetup ` +
        "(npm run test:jest -- --selectProjects integration), or a cluster from npm run cluster:up " +
        `(${CLUSTER_ENV}=.cluster/cluster.json).`,
    );
  }
  cached = JSON.parse(readFileSync(file, "utf8")) as ControlPlaneInfo;
  return cached;
}

/** A KubeConfig for the admin (system:masters) or a user declared at start (see defaultUsers). */
export function kubeConfig(user: string = ADMIN_USER): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(userFromInfo(clusterInfo(), user).kubeconfigPath);
  return kc;
}

export const adminKubeConfig = (): KubeConfig => kubeConfig(ADMIN_USER);
export const userKubeConfig = (name: string): KubeConfig => kubeConfig(name);

/** Server, CA and bearer token of a user, for raw HTTPS requests. */
export function endpoint(user: string = ADMIN_USER): ApiEndpoint {
  const info = clusterInfo();
  return { server: info.server, caPem: info.caPem, token: userFromInfo(info, user).token };
}

/** A serving certificate signed by the cluster CA, for a webhook at https://127.0.0.1:<port>. */
export function webhookCertificate(
  request?: ServingCertificateRequest,
): Promise<IssuedCertificate> {
  return issueServingCertificate(clusterInfo(), request);
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/g, "");
}

/**
 * Creates a namespace with a unique name for the current test and returns its name. There is no
 * namespace controller, so namespaces are not deleted: the control plane is thrown away after the run.
 */
export async function newNamespace(prefix?: string): Promise<string> {
  const testName = expect.getState().currentTestName ?? "";
  const name = `${slug(prefix ?? testName) || "t"}-${randomBytes(4).toString("hex")}`;
  await adminKubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespace({
      body: {
        metadata: {
          name,
          labels: { "sdewan.test/namespace": "true" },
          annotations: { "sdewan.test/test-name": testName },
        },
      },
    });
  return name;
}

/** A KubeConfig for the test API server that authenticates with `token` (e.g. a TokenRequest's). */
export function kubeConfigWithToken(token: string): KubeConfig {
  const info = clusterInfo();
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      { name: "test", server: info.server, caData: Buffer.from(info.caPem).toString("base64") },
    ],
    users: [{ name: "token", token }],
    contexts: [{ name: "test", cluster: "test", user: "token" }],
    currentContext: "test",
  });
  return kc;
}
