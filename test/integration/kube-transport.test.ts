// shared/kube's transport against the run's real kube-apiserver over TLS: many requests share
// one kept-alive connection (also across clients of the same identity), concurrency stays within
// the agent's socket limit, and the API server's refusals arrive as the KubeError codes callers
// branch on, with a message that says what failed and why, and nothing more.
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { ClientRequest } from "node:http";
import { requireKind } from "../../shared/kinds/index.js";
import { KubeError, createKubeClient, ruleResource } from "../../shared/kube/index.js";
import { MAX_SOCKETS } from "../../shared/kube/transport.js";
import { adminKubeConfig, newNamespace, userKubeConfig } from "./support/cluster.js";

const POLICIES = ruleResource(requireKind("Mwan3Policy"));

const policy = (namespace: string, name: string, spec: unknown) => ({
  metadata: { name, namespace },
  spec,
});
const validSpec = { members: [{ network: "ovn-net1", metric: 2, weight: 2 }] };

/** The local ports of the sockets that carried each answered node:http(s) request. */
function recordLocalPorts(): { ports: number[]; stop: () => void } {
  const ports: number[] = [];
  const onResponse = (message: unknown): void => {
    const port = (message as { request: ClientRequest }).request.socket?.localPort;
    if (port !== undefined) ports.push(port);
  };
  subscribe("http.client.response.finish", onResponse);
  return { ports, stop: () => unsubscribe("http.client.response.finish", onResponse) };
}

async function failure(request: Promise<unknown>): Promise<KubeError> {
  const error = await request.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof KubeError)) throw new Error(`expected a KubeError, got ${String(error)}`);
  return error;
}

let namespace: string;
beforeEach(async () => {
  namespace = await newNamespace("kube-transport");
});

describe("one kept-alive connection pool per process", () => {
  it("200 sequential requests of two clients travel on one TLS connection", async () => {
    const first = createKubeClient(adminKubeConfig());
    const second = createKubeClient(adminKubeConfig());
    await first.create(POLICIES, policy(namespace, "p1", validSpec));
    const recorded = recordLocalPorts();
    try {
      for (let i = 0; i < 100; i += 1) {
        await first.get(POLICIES, { namespace, name: "p1" });
        await second.patchStatus(POLICIES, { namespace, name: "p1" }, { message: `round ${i}` });
      }
    } finally {
      recorded.stop();
    }
    expect(recorded.ports).toHaveLength(200);
    expect(new Set(recorded.ports).size).toBe(1);
  });

  it(`a burst of 100 concurrent reads opens at most ${MAX_SOCKETS} connections`, async () => {
    const kube = createKubeClient(adminKubeConfig());
    await kube.create(POLICIES, policy(namespace, "p1", validSpec));
    const recorded = recordLocalPorts();
    try {
      await Promise.all(
        Array.from({ length: 100 }, () => kube.get(POLICIES, { namespace, name: "p1" })),
      );
    } finally {
      recorded.stop();
    }
    expect(recorded.ports).toHaveLength(100);
    expect(new Set(recorded.ports).size).toBeLessThanOrEqual(MAX_SOCKETS);
  });
});

describe("the API server's refusals as KubeError codes", () => {
  it("404: a patch of a missing object is notFound", async () => {
    const error = await failure(
      createKubeClient(adminKubeConfig()).mergePatch(
        POLICIES,
        { namespace, name: "absent" },
        { metadata: { labels: { a: "b" } } },
      ),
    );
    expect(error).toMatchObject({ code: "notFound", status: 404, reason: "NotFound" });
    expect(error.message).toBe(
      `patch Mwan3Policy ${namespace}/absent: 404 NotFound: mwan3policies.batch.sdewan.akraino.org "absent" not found`,
    );
  });

  it("409: creating an object that exists is conflict (AlreadyExists)", async () => {
    const kube = createKubeClient(adminKubeConfig());
    await kube.create(POLICIES, policy(namespace, "p1", validSpec));
    const error = await failure(kube.create(POLICIES, policy(namespace, "p1", validSpec)));
    expect(error).toMatchObject({ code: "conflict", status: 409, reason: "AlreadyExists" });
    expect(error.message).toBe(
      `create Mwan3Policy ${namespace}/p1: 409 AlreadyExists: mwan3policies.batch.sdewan.akraino.org "p1" already exists`,
    );
  });

  it("422: an object the CRD schema refuses is invalid", async () => {
    const error = await failure(
      createKubeClient(adminKubeConfig()).create(
        POLICIES,
        policy(namespace, "p1", { members: "not-a-list" }),
      ),
    );
    expect(error).toMatchObject({ code: "invalid", status: 422, reason: "Invalid" });
    expect(error.message).toMatch(
      new RegExp(`^create Mwan3Policy ${namespace}/p1: 422 Invalid: .*spec\\.members`),
    );
  });

  it("403: a user without RBAC is forbidden, and the message names the user and verb", async () => {
    const error = await failure(
      createKubeClient(userKubeConfig("bob")).list(POLICIES, { namespace }),
    );
    expect(error).toMatchObject({ code: "forbidden", status: 403, reason: "Forbidden" });
    expect(error.message).toContain(
      `list Mwan3Policy in ${namespace}: 403 Forbidden: mwan3policies.batch.sdewan.akraino.org is forbidden: User "bob" cannot list resource "mwan3policies"`,
    );
  });
});
