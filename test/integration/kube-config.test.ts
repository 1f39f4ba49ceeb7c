// shared/kube's own kubeconfig reader against the run's real kube-apiserver: a client built from
// the harness's kubeconfig file reads and writes, and one built from a kubeconfig that names its
// CA and token files relative to its own directory authenticates as the user those files say.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { ADMIN_USER, userFromInfo } from "../../dev/control-plane/control-plane.js";
import { requireKind } from "../../shared/kinds/index.js";
import {
  KubeError,
  createKubeClient,
  loadKubeConfig,
  ruleResource,
} from "../../shared/kube/index.js";
import { clusterInfo, endpoint, newNamespace } from "./support/cluster.js";

const POLICIES = ruleResource(requireKind("Mwan3Policy"));
const policy = (namespace: string, name: string) => ({
  metadata: { name, namespace },
  spec: { members: [{ network: "ovn-net1", metric: 2, weight: 2 }] },
});

let namespace: string;
let dir: string;
beforeEach(async () => {
  namespace = await newNamespace("kube-config");
  dir = mkdtempSync(path.join(tmpdir(), "kube-config-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A kubeconfig in `dir` whose CA and token are files next to it, named by relative paths. */
function kubeconfigWithFiles(user: string): string {
  const { server, caPem, token } = endpoint(user);
  writeFileSync(path.join(dir, "ca.crt"), caPem);
  writeFileSync(path.join(dir, `${user}.token`), token);
  const file = path.join(dir, "config");
  writeFileSync(
    file,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "local", cluster: { server, "certificate-authority": "ca.crt" } }],
      users: [{ name: user, user: { tokenFile: `${user}.token` } }],
      contexts: [{ name: "ctx", context: { cluster: "local", user } }],
      "current-context": "ctx",
    }),
  );
  return file;
}

describe("a KubeClient from shared/kube's own kubeconfig reader", () => {
  it("on the harness's admin kubeconfig (inline CA, token) creates, reads and patches status", async () => {
    const kubeconfigPath = userFromInfo(clusterInfo(), ADMIN_USER).kubeconfigPath;
    const kube = createKubeClient(loadKubeConfig({ env: { KUBECONFIG: kubeconfigPath } }));

    await kube.create(POLICIES, policy(namespace, "p1"));
    await kube.patchStatus(POLICIES, { namespace, name: "p1" }, { message: "written" });

    expect(await kube.get(POLICIES, { namespace, name: "p1" })).toMatchObject({
      metadata: { name: "p1", namespace },
      status: { message: "written" },
    });
  });

  it("with CA and token files relative to the kubeconfig's directory, writes as the admin", async () => {
    const kube = createKubeClient(
      loadKubeConfig({ env: { KUBECONFIG: kubeconfigWithFiles(ADMIN_USER) } }),
    );

    await kube.create(POLICIES, policy(namespace, "p2"));

    const names = (await kube.list(POLICIES, { namespace })).map((p) => p.metadata.name);
    expect(names).toEqual(["p2"]);
  });

  it("with bob's token file, is bob: the API server refuses him by name", async () => {
    const kube = createKubeClient(
      loadKubeConfig({ env: { KUBECONFIG: kubeconfigWithFiles("bob") } }),
    );

    const refusal = await kube.list(POLICIES, { namespace }).then(
      () => undefined,
      (error: unknown) => error,
    );

    if (!(refusal instanceof KubeError))
      throw new Error(`expected a KubeError: ${String(refusal)}`);
    expect(refusal.code).toBe("forbidden");
    expect(refusal.message).toContain('User "bob"');
  });
});
