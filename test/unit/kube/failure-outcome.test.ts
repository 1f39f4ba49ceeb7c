// One mapping from a failed API call to an outcome (shared/kube/failure-outcome.ts), and every
// event function answering by it: an API server that refuses a request for good (422) makes a
// permanent outcome, one that answers every write with 409 (a race that never settles) a retry.
import { createClusterLinkExport } from "../../../functions/clusterlink-export/index.js";
import { createClusterLinkImport } from "../../../functions/clusterlink-import/index.js";
import { createClusterLinkPeerHealth } from "../../../functions/clusterlink-peer-health/index.js";
import { createEgressGroupSync } from "../../../functions/egress-group-sync/index.js";
import { createNetworkPolicySync } from "../../../functions/network-policy-sync/index.js";
import { createOnDeploymentReady } from "../../../functions/on-deployment-ready/index.js";
import { createReconcileRule } from "../../../functions/reconcile-rule/index.js";
import type { Log } from "../../../shared/core/context.js";
import type { IntakeEvent } from "../../../shared/events/types.js";
import {
  createKubeClient,
  KubeError,
  kubeFailureOutcome,
  raced,
} from "../../../shared/kube/index.js";
import type { KubeErrorCode } from "../../../shared/kube/index.js";
import type { EventFunction } from "../../../shared/runtime/function.js";
import { fakeApiServer, json, statusBody } from "./fake-api-server.js";

const failure = (code: KubeErrorCode) => new KubeError(code, `HTTP ${code}`);

describe("an API failure as an outcome", () => {
  it.each([
    ["notFound", { kind: "done", result: "gone" }],
    ["conflict", { kind: "retry", retryAfterSeconds: 1 }],
    ["invalid", { kind: "permanent", code: "Rejected" }],
    ["forbidden", { kind: "retry", retryAfterSeconds: 2 }],
    ["unavailable", { kind: "retry", retryAfterSeconds: 2 }],
    ["unexpected", { kind: "retry", retryAfterSeconds: 2 }],
  ] as const)("%s -> %o", (code, outcome) => {
    expect(kubeFailureOutcome(failure(code), "the write")).toMatchObject(outcome);
  });

  it("a 404 on what this event just read is a race where the caller says so", () => {
    const outcome = kubeFailureOutcome(failure("notFound"), "the write", { notFound: "raced" });
    expect(outcome).toMatchObject({ kind: "retry", retryAfterSeconds: 1 });
  });

  it("a race is a 409 or a 404, nothing else", () => {
    const codes: KubeErrorCode[] = ["notFound", "conflict", "invalid", "forbidden", "unavailable"];
    expect(codes.filter((code) => raced(failure(code)))).toEqual(["notFound", "conflict"]);
    expect(raced(new Error("not an API failure"))).toBe(false);
  });

  it("what is not an API failure is a bug: thrown", () => {
    expect(() => kubeFailureOutcome(new TypeError("boom"), "the write")).toThrow("boom");
  });
});

const SILENT: Log = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

const objectEvent = (kind: string, namespace: string, name: string): IntakeEvent => ({
  type: "object",
  id: `${kind}-1`,
  action: "update",
  ref: { apiVersion: "", kind, namespace, name },
});

type Make = (deps: { kube: () => ReturnType<typeof createKubeClient> }) => EventFunction;

const FUNCTIONS: readonly [string, Make, IntakeEvent][] = [
  ["reconcile-rule", createReconcileRule, objectEvent("Mwan3Rule", "ns1", "r1")],
  ["on-deployment-ready", createOnDeploymentReady, objectEvent("Deployment", "ns1", "cnf1")],
  ["egress-group-sync", createEgressGroupSync, objectEvent("Egress", "", "eg1")],
  ["network-policy-sync", createNetworkPolicySync, objectEvent("NetworkPolicy", "ns1", "np1")],
  ["clusterlink-import", createClusterLinkImport, objectEvent("Import", "ns1", "imp1")],
  ["clusterlink-export", createClusterLinkExport, objectEvent("Export", "ns1", "exp1")],
  [
    "clusterlink-peer-health",
    createClusterLinkPeerHealth,
    objectEvent("Peer", "clusterlink-system", "peer1"),
  ],
];

/** The outcome of `make`'s function for `event`, the API server answering every request so. */
async function outcomeWhenApiAnswers(
  status: number,
  reason: string,
  make: Make,
  event: IntakeEvent,
) {
  const api = await fakeApiServer((_seen, res) =>
    json(res, status, statusBody(status, reason, "no")),
  );
  try {
    const fn = make({ kube: () => createKubeClient(api.kubeConfig, { maxConflictAttempts: 2 }) });
    const ctx = {
      correlationId: "c1",
      log: SILENT,
      calls: { api: 0, cnf: 0 },
      signal: new AbortController().signal,
    };
    return await fn.handle(event, ctx);
  } finally {
    await api.close();
  }
}

describe("every event function maps an API failure the same way", () => {
  it.each(FUNCTIONS)(
    "%s: a request refused for good (422) is permanent",
    async (_name, make, event) => {
      const outcome = await outcomeWhenApiAnswers(422, "Invalid", make, event);
      expect(outcome).toMatchObject({ kind: "permanent", code: "Rejected" });
    },
  );

  it.each(FUNCTIONS)(
    "%s: a race that never settles (409) is retried",
    async (_name, make, event) => {
      const outcome = await outcomeWhenApiAnswers(409, "Conflict", make, event);
      expect(outcome).toMatchObject({ kind: "retry" });
    },
  );
});
