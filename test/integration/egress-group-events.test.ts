// The MembersChanged Event on an EgressGroup, through the real API server and written with
// egress-group-sync's own role (manifests/rbac/egress-group-sync.yaml: its ClusterRole, and the
// Role that lets it write Events in "default" only), read back the way `kubectl describe
// egressgroup <name>` reads them (core/v1 Events of every namespace, by involvedObject): one per
// change of members, none per redelivery, a repeated change counted in the Event's series.
import { jest } from "@jest/globals";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import {
  AuthorizationV1Api,
  RbacAuthorizationV1Api,
  type V1Role,
  type V1RoleBinding,
} from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import { pollUntil } from "../../dev/control-plane/api.js";
import { createEgressGroupSync } from "../../functions/egress-group-sync/index.js";
import { CORE_EVENTS } from "./support/events.js";
import type { IntakeEvent, WatchAction } from "../../shared/events/types.js";
import { EGRESS_GROUPS, EVENTS } from "../../shared/kube/index.js";
import type { EventFunction, HandlerContext } from "../../shared/runtime/function.js";
import { EgressWorld, objectEvent } from "./egress-harness.js";
import { adminKubeConfig } from "./support/cluster.js";
import { identityFrom, refusal, type Identity } from "./support/identity.js";

jest.setTimeout(60_000);

interface DescribedEvent {
  readonly namespace: string;
  readonly type: string;
  readonly reason: string;
  readonly message: string;
  readonly count: number;
  readonly reportingComponent: string;
}

/** The manifest's namespaced Role for Events, granted to `identity`'s ServiceAccount. */
async function grantEventsRole(identity: Identity): Promise<void> {
  const docs = parseAllDocuments(
    readFileSync(new URL("../../manifests/rbac/egress-group-sync.yaml", import.meta.url), "utf8"),
  ).map((d) => d.toJS() as unknown);
  const ofKind = (kind: string) => docs.find((d) => (d as { kind?: string }).kind === kind);
  const role = ofKind("Role") as V1Role | undefined;
  const binding = ofKind("RoleBinding") as V1RoleBinding | undefined;
  if (role === undefined || binding === undefined) throw new Error("no Role/RoleBinding");
  const [, , saNamespace = "", saName = ""] = identity.user.split(":");
  const name = `${role.metadata?.name ?? "role"}-${randomBytes(3).toString("hex")}`;
  const namespace = role.metadata?.namespace ?? "";
  const rbac = adminKubeConfig().makeApiClient(RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({ namespace, body: { ...role, metadata: { name, namespace } } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      ...binding,
      metadata: { name, namespace },
      roleRef: { ...binding.roleRef, name },
      subjects: [{ kind: "ServiceAccount", name: saName, namespace: saNamespace }],
    },
  });
  const review = identity.kc.makeApiClient(AuthorizationV1Api);
  await pollUntil(
    async () => {
      const answer = await review.createSelfSubjectAccessReview({
        body: {
          spec: {
            resourceAttributes: {
              group: "events.k8s.io",
              resource: "events",
              verb: "create",
              namespace,
            },
          },
        },
      });
      return answer.status?.allowed === true ? true : undefined;
    },
    () => `the Events RoleBinding of ${identity.user} to take effect`,
    { timeoutMs: 10_000, intervalMs: 50 },
  );
}

describe("MembersChanged Events on an EgressGroup, as kubectl describe shows them", () => {
  const world = new EgressWorld();
  let namespace: string;
  let egress: string;
  let fn: EventFunction;
  let calls: HandlerContext["calls"];

  beforeAll(async () => {
    const identity = await identityFrom("egress-group-sync.yaml");
    await grantEventsRole(identity);
    fn = createEgressGroupSync({ kube: () => identity.kube });
    namespace = await world.namespace("egress-events");
    egress = world.name("members");
    await world.pod(namespace, "web-1", world.labels({ app: "web" }), { ips: ["100.64.1.1"] });
  });

  const send = async (event: IntakeEvent) => {
    calls = { api: 0, cnf: 0 };
    const outcome = await fn.handle(event, {
      correlationId: event.id,
      log: { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} },
      calls,
      signal: new AbortController().signal,
    });
    expect(outcome.kind).toBe("done");
  };
  const egressEvent = () =>
    send(
      objectEvent("update", {
        apiVersion: "crd.antrea.io/v1beta1",
        kind: "Egress",
        namespace: "",
        name: egress,
      }),
    );
  const podEvent = (name: string, action: WatchAction = "update") =>
    send(objectEvent(action, { apiVersion: "v1", kind: "Pod", namespace, name }));

  /** The Events `kubectl describe egressgroup <egress>` lists, oldest first. */
  async function describeEvents(): Promise<DescribedEvent[]> {
    const group = await world.kube.get(EGRESS_GROUPS, { name: egress });
    const selector = [
      "involvedObject.kind=EgressGroup",
      `involvedObject.name=${egress}`,
      `involvedObject.uid=${group?.metadata.uid ?? ""}`,
    ].join(",");
    const events = await world.kube.list(CORE_EVENTS, { fieldSelector: selector });
    const when = (e: unknown): string => String((e as { eventTime?: string }).eventTime ?? "");
    return events
      .sort((a, b) => when(a).localeCompare(when(b)))
      .map((e) => {
        const raw = e as unknown as Record<string, unknown> & {
          series?: { count?: number };
          count?: number;
        };
        return {
          namespace: e.metadata.namespace ?? "",
          type: String(raw["type"]),
          reason: String(raw["reason"]),
          message: String(raw["message"]),
          count: raw.series?.count ?? raw.count ?? 1,
          reportingComponent: String(raw["reportingComponent"]),
        };
      });
  }
  const notes = async () => (await describeEvents()).map((e) => `${e.message} x${e.count}`);

  it("the group's creation: +1, in default, reported by egress-group-sync", async () => {
    await world.egress(egress, { podSelector: { matchLabels: world.labels({ app: "web" }) } });
    await egressEvent();
    expect(await world.members(egress)).toEqual([`${namespace}/web-1`]);
    expect(await describeEvents()).toEqual([
      {
        namespace: "default",
        type: "Normal",
        reason: "MembersChanged",
        message: `+1 -0: joined ${namespace}/web-1`,
        count: 1,
        reportingComponent: "sdewan.akraino.org/egress-group-sync",
      },
    ]);
    expect(calls).toMatchObject({ eventsRecorded: 1 });
  });

  // (No resync here: it would recompute the groups of the test files running beside this one.)
  it("redeliveries of the Egress's and the Pod's events record nothing", async () => {
    await egressEvent();
    await podEvent("web-1");
    expect(calls.eventsRecorded).toBeUndefined();
    expect(await notes()).toEqual([`+1 -0: joined ${namespace}/web-1 x1`]);
  });

  it("a Pod joining, then one leaving: one Event each, with what changed", async () => {
    await world.pod(namespace, "web-2", world.labels({ app: "web" }), { ips: ["100.64.1.2"] });
    await podEvent("web-2", "add");
    await world.relabelPod(namespace, "web-1", { app: "db" });
    await podEvent("web-1");
    expect(await world.members(egress)).toEqual([`${namespace}/web-2`]);
    expect(await notes()).toEqual([
      `+1 -0: joined ${namespace}/web-1 x1`,
      `+1 -0: joined ${namespace}/web-2 x1`,
      `+0 -1: left ${namespace}/web-1 x1`,
    ]);
  });

  it("the same change again (web-1 rejoins) raises its Event's series count", async () => {
    await world.relabelPod(namespace, "web-1", { app: "web" });
    await podEvent("web-1");
    await podEvent("web-1"); // a redelivery: no change, no count
    expect(await notes()).toEqual([
      `+1 -0: joined ${namespace}/web-1 x2`,
      `+1 -0: joined ${namespace}/web-2 x1`,
      `+0 -1: left ${namespace}/web-1 x1`,
    ]);
  });

  it("a change of a member's IPs is not a change of members", async () => {
    await world.setPodStatus(namespace, "web-2", "Running", ["100.64.1.22"]);
    await podEvent("web-2");
    expect((await world.group(egress))?.status?.members.map((m) => m.ips)).toContainEqual([
      "100.64.1.22",
    ]);
    expect(calls.eventsRecorded).toBeUndefined();
    expect(await describeEvents()).toHaveLength(3);
  });

  it("its role writes Events in default only, and may neither list nor delete them", async () => {
    const identity = await identityFrom("egress-group-sync.yaml");
    await grantEventsRole(identity);
    const event = {
      metadata: { name: `probe-${world.run}`, namespace },
      eventTime: new Date().toISOString().replace("Z", "000Z"),
      reportingController: "sdewan.akraino.org/egress-group-sync",
      reportingInstance: "test",
      action: "Sync",
      reason: "MembersChanged",
      type: "Normal",
      regarding: { kind: "EgressGroup", name: egress },
    };
    expect(await refusal(identity.kube.create(EVENTS, event))).toBe("forbidden 403");
    expect(await refusal(identity.kube.list(EVENTS, { namespace: "default" }))).toBe(
      "forbidden 403",
    );
    expect(await refusal(identity.kube.delete(EVENTS, { namespace: "default", name: "any" }))).toBe(
      "forbidden 403",
    );
  });

  it("without the Events Role the group is still written; only the Event is dropped", async () => {
    const identity = await identityFrom("egress-group-sync.yaml");
    fn = createEgressGroupSync({ kube: () => identity.kube });
    await world.pod(namespace, "web-3", world.labels({ app: "web" }), { ips: ["100.64.1.3"] });
    await podEvent("web-3", "add");
    expect(await world.members(egress)).toContain(`${namespace}/web-3`);
    expect(calls).toMatchObject({ eventsDropped: 1 });
    expect(calls.eventsRecorded).toBeUndefined();
  });
});
