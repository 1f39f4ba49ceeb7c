// Least privilege, proved against the real API server: each function runs its happy path as a
// service account that holds exactly the ClusterRole of manifests/rbac/<function>.yaml (created
// from the file, with a TokenRequest token), a write outside the role is refused with 403, and
// the same scenario with one rule removed from the role fails: the role is sufficient and tight.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { jest } from "@jest/globals";
import { parseAllDocuments } from "yaml";
import { createEgressGroupSync } from "../../functions/egress-group-sync/index.js";
import { createNetworkPolicySync } from "../../functions/network-policy-sync/index.js";
import { kubeNodeAgentStore, syncNode } from "../../shared/netpol/index.js";
import { createOnDeploymentReady } from "../../functions/on-deployment-ready/index.js";
import { createReconcileRule } from "../../functions/reconcile-rule/index.js";
import { kubeAdmissionReader } from "../../shared/admission/index.js";
import type { IntakeEvent } from "../../shared/events/types.js";
import {
  CONFIG_MAPS,
  DEPLOYMENTS,
  EVENTS,
  EGRESSES,
  EGRESS_GROUPS,
  NAMESPACES,
  NETPOL_ENDPOINTS,
  NETWORK_POLICIES,
  PODS,
  ruleResource,
  type KubeClient,
} from "../../shared/kube/index.js";
import { RULE_GROUP, requireKind } from "../../shared/kinds/index.js";
import type { EventFunction, HandlerContext } from "../../shared/runtime/function.js";
import type { Outcome } from "../../shared/core/outcome.js";
import { ruleKinds } from "../../shared/admission/index.js";
import { PRUNE_ANNOTATION } from "../../shared/sync/plan-prune.js";
import {
  DEFAULT_LEDGER_NAMESPACE,
  LEDGER_KEY,
  ledgerName,
} from "../../shared/sync/prune-ledger.js";
import type { Cnf } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";
import { EgressWorld } from "./egress-harness.js";
import { NetpolWorld } from "./netpol-harness.js";
import { newNamespace } from "./support/cluster.js";
import { allowed, identityFrom, refusal, type Identity } from "./support/identity.js";

jest.setTimeout(90_000);

const PURPOSE = "rbac";
const ZONES = "firewall/zones";

async function zones(world: SyncWorld): Promise<void> {
  await world.createRule("FirewallZone", "lan1", PURPOSE, {
    network: ["ovn-net1"],
    input: "ACCEPT",
    output: "ACCEPT",
  });
}

describe("reconcile-rule runs with exactly manifests/rbac/reconcile-rule.yaml", () => {
  let world: SyncWorld;
  let cnf: Cnf;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    await zones(world);
  });
  afterEach(() => world.close());

  const reconcileAs = (identity: Identity): EventFunction =>
    createReconcileRule({ kube: () => identity.kube, env: world.env });
  const send = (fn: EventFunction): Promise<Outcome> =>
    fn.handle(world.ruleEvent("FirewallZone", "lan1"), world.context());

  it("applies a rule to both pods, adds its finalizer, reports inSync, and on delete cleans up and releases it", async () => {
    const fn = reconcileAs(await identityFrom("reconcile-rule.yaml"));
    expect((await send(fn)).kind).toBe("done");
    const view = await world.ruleView("FirewallZone", "lan1");
    expect(view?.inSync).toBe(true);
    expect(view?.finalizers).toEqual([requireKind("FirewallZone").finalizer]);
    expect(world.held(cnf, ZONES)).toEqual([["lan1"], ["lan1"]]);

    // Deleting a rule that holds a finalizer is an update (its deletionTimestamp set), as a watch
    // tells it; a delete event comes only once the rule is gone (ADR 0021 reads no rule for it).
    await world.deleteRule("FirewallZone", "lan1");
    expect((await send(fn)).kind).toBe("done");
    expect(await world.ruleView("FirewallZone", "lan1")).toBeUndefined();
    expect(world.held(cnf, ZONES)).toEqual([[], []]);
    // Applied and DeletedFromCNF, both written with the role's own token.
    expect(world.calls).toMatchObject({ eventsRecorded: 2 });
    expect(world.calls.eventsDropped).toBeUndefined();
  });

  it("without the Events permission the rule is still applied; only its Event is dropped", async () => {
    const fn = reconcileAs(
      await identityFrom("reconcile-rule.yaml", {
        group: "events.k8s.io",
        resource: "events",
        verb: "create",
      }),
    );
    expect((await send(fn)).kind).toBe("done");
    expect((await world.ruleView("FirewallZone", "lan1"))?.inSync).toBe(true);
    expect(world.calls).toMatchObject({ eventsDropped: 1 });
  });

  it("is refused (403) any write outside its role: deleting a rule, patching a Deployment or a Pod, creating a Namespace", async () => {
    const { kube } = await identityFrom("reconcile-rule.yaml");
    const ns = world.namespace;
    const zone = ruleResource(requireKind("FirewallZone"));
    expect(await refusal(kube.delete(zone, { namespace: ns, name: "lan1" }))).toBe("forbidden 403");
    const podName = cnf.pods[0]?.name ?? "";
    const patch = { metadata: { labels: { touched: "yes" } } };
    expect(
      await refusal(kube.mergePatch(DEPLOYMENTS, { namespace: ns, name: cnf.name }, patch)),
    ).toBe("forbidden 403");
    expect(await refusal(kube.mergePatch(PODS, { namespace: ns, name: podName }, patch))).toBe(
      "forbidden 403",
    );
    expect(await refusal(kube.create(NAMESPACES, { metadata: { name: `x-${ns}` } }))).toBe(
      "forbidden 403",
    );
    // Events: written and counted, never listed or deleted.
    expect(await refusal(kube.list(EVENTS, { namespace: ns }))).toBe("forbidden 403");
    expect(await refusal(kube.delete(EVENTS, { namespace: ns, name: "any" }))).toBe(
      "forbidden 403",
    );
  });

  it("fails without the status permission: the rule is never reported, the event is not done", async () => {
    const fn = reconcileAs(
      await identityFrom("reconcile-rule.yaml", {
        group: RULE_GROUP,
        resource: `${requireKind("FirewallZone").plural}/status`,
        verb: "patch",
      }),
    );
    expect((await send(fn)).kind).not.toBe("done");
    expect((await world.ruleView("FirewallZone", "lan1"))?.inSync).toBeUndefined();
  });
});

describe("on-deployment-ready runs with exactly manifests/rbac/on-deployment-ready.yaml", () => {
  let world: SyncWorld;
  let cnf: Cnf;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    await zones(world);
    await world.createRule("FirewallZone", "wan1", PURPOSE, {
      network: ["ovn-net2"],
      input: "REJECT",
      output: "ACCEPT",
    });
  });
  afterEach(() => world.close());

  /** The function as `identity`, its ledgers in the namespace standing in for the manifest's. */
  const syncAs = (identity: Identity): EventFunction =>
    createOnDeploymentReady({
      kube: () => identity.kube,
      env: { ...world.env, PRUNE_LEDGER_NAMESPACE: ledgersOf(identity) },
    });
  const ledgersOf = (identity: Identity): string =>
    identity.roleNamespaces.get(DEFAULT_LEDGER_NAMESPACE) ?? "no-ledger-role-in-the-manifest";
  const ledgerText = async (identity: Identity): Promise<string | undefined> => {
    const deployment = await world.kube.get(DEPLOYMENTS, {
      namespace: world.namespace,
      name: cnf.name,
    });
    if (deployment === undefined) return undefined;
    const key = { namespace: ledgersOf(identity), name: ledgerName(deployment) };
    return (await world.kube.get(CONFIG_MAPS, key))?.data?.[LEDGER_KEY];
  };
  const deploymentEvent = (): IntakeEvent => ({
    type: "object",
    id: randomBytes(8).toString("hex"),
    action: "update",
    ref: { apiVersion: "apps/v1", kind: "Deployment", namespace: world.namespace, name: cnf.name },
  });
  const resyncEvent = (): IntakeEvent => ({
    type: "resync",
    id: randomBytes(8).toString("hex"),
    scope: { namespace: world.namespace },
  });

  it("brings every rule of a pruning CNF in sync on both pods and writes its ledger, from a Deployment event and from a resync", async () => {
    await world.annotateCnf(cnf, { [PRUNE_ANNOTATION]: "true" });
    const identity = await identityFrom("on-deployment-ready.yaml");
    const fn = syncAs(identity);
    expect((await fn.handle(deploymentEvent(), world.context())).kind).toBe("done");
    for (const name of ["lan1", "wan1"]) {
      expect((await world.ruleView("FirewallZone", name))?.inSync).toBe(true);
    }
    expect(world.held(cnf, ZONES)).toEqual([
      ["lan1", "wan1"],
      ["lan1", "wan1"],
    ]);
    expect(await ledgerText(identity)).toBe("firewall/zones/lan1\nfirewall/zones/wan1");
    await world.forceDeleteRule("FirewallZone", "wan1");
    expect(await fn.handle(resyncEvent(), world.context())).toMatchObject({
      kind: "done",
      result: "1 unchanged, 2 pruned",
    });
    expect(await ledgerText(identity)).toBe("firewall/zones/lan1");
  });

  it("tells a pod restart on the CNF's Deployment (RulesNotReady, RulesApplied) with its own token", async () => {
    const fn = syncAs(await identityFrom("on-deployment-ready.yaml"));
    expect((await fn.handle(deploymentEvent(), world.context())).kind).toBe("done");
    const pod = cnf.pods[1] as Cnf["pods"][0];
    world.calls.eventsRecorded = 0;
    await world.crashPod(pod);
    expect((await fn.handle(deploymentEvent(), world.context())).kind).toBe("done");
    await world.setPodReady(pod, true);
    expect((await fn.handle(deploymentEvent(), world.context())).kind).toBe("done");

    expect(world.calls).toMatchObject({ eventsRecorded: 2 });
    expect(world.calls.eventsDropped).toBeUndefined();
    const onDeployment = await world.kube.list(EVENTS, {
      namespace: world.namespace,
      fieldSelector: `regarding.kind=Deployment,regarding.name=${cnf.name}`,
    });
    expect(onDeployment.map((e) => (e as { reason?: string }).reason).sort()).toEqual([
      "RulesApplied",
      "RulesNotReady",
    ]);
  });

  it("may patch no Deployment anywhere (kubectl auth can-i patch deployments -n kube-system: no), and write ConfigMaps only in the ledger namespace", async () => {
    const identity = await identityFrom("on-deployment-ready.yaml");
    const can = (group: string, resource: string, verb: string, namespace?: string) =>
      allowed(identity.kc, { group, resource, verb, namespace });
    for (const namespace of ["kube-system", world.namespace, undefined]) {
      for (const verb of ["patch", "update", "create", "delete"]) {
        expect([namespace, verb, await can("apps", "deployments", verb, namespace)]).toEqual([
          namespace,
          verb,
          false,
        ]);
      }
    }
    for (const namespace of ["kube-system", "sdewan-system", world.namespace, undefined]) {
      for (const verb of ["get", "create", "update"]) {
        expect([namespace, verb, await can("", "configmaps", verb, namespace)]).toEqual([
          namespace,
          verb,
          false,
        ]);
      }
    }
    const ledgers = ledgersOf(identity);
    for (const verb of ["get", "create", "update"]) {
      expect([verb, await can("", "configmaps", verb, ledgers)]).toEqual([verb, true]);
    }
    for (const verb of ["list", "delete", "patch"]) {
      expect([verb, await can("", "configmaps", verb, ledgers)]).toEqual([verb, false]);
    }
    // The CNF sync Leases (ADR 0008): taken, taken over, deleted there, and nowhere else.
    const leases = "coordination.k8s.io";
    for (const verb of ["get", "create", "update", "delete"]) {
      expect([verb, await can(leases, "leases", verb, ledgers)]).toEqual([verb, true]);
      for (const namespace of ["kube-system", "sdewan-system", world.namespace, undefined]) {
        expect([namespace, verb, await can(leases, "leases", verb, namespace)]).toEqual([
          namespace,
          verb,
          false,
        ]);
      }
    }
    for (const verb of ["list", "watch", "patch"]) {
      expect([verb, await can(leases, "leases", verb, ledgers)]).toEqual([verb, false]);
    }
    // And the API server agrees when the token tries.
    const patch = { metadata: { annotations: { touched: "yes" } } };
    expect(
      await refusal(
        identity.kube.mergePatch(
          DEPLOYMENTS,
          { namespace: world.namespace, name: cnf.name },
          patch,
        ),
      ),
    ).toBe("forbidden 403");
  });

  it("is refused (403) any write outside its role: creating or deleting a Deployment, deleting a Pod or a rule", async () => {
    const { kube } = await identityFrom("on-deployment-ready.yaml");
    const ns = world.namespace;
    const copy = { metadata: { name: "second-cnf", namespace: ns }, spec: {} };
    expect(await refusal(kube.create(DEPLOYMENTS, copy))).toBe("forbidden 403");
    expect(await refusal(kube.delete(DEPLOYMENTS, { namespace: ns, name: cnf.name }))).toBe(
      "forbidden 403",
    );
    expect(await refusal(kube.delete(PODS, { namespace: ns, name: cnf.pods[0]?.name ?? "" }))).toBe(
      "forbidden 403",
    );
    const zone = ruleResource(requireKind("FirewallZone"));
    expect(await refusal(kube.delete(zone, { namespace: ns, name: "wan1" }))).toBe("forbidden 403");
  });

  it("without creating ConfigMaps in the ledger namespace, a pruning CNF's ledger is not kept (the function says which grant is missing)", async () => {
    await world.annotateCnf(cnf, { [PRUNE_ANNOTATION]: "true" });
    const identity = await identityFrom("on-deployment-ready.yaml", {
      group: "",
      resource: "configmaps",
      verb: "create",
    });
    const fn = syncAs(identity);
    // Pruning degrades rather than blocking the sync: the rules are applied, the ledger is not.
    expect((await fn.handle(deploymentEvent(), world.context())).kind).toBe("done");
    expect(world.held(cnf, ZONES)).toEqual([
      ["lan1", "wan1"],
      ["lan1", "wan1"],
    ]);
    expect(await ledgerText(identity)).toBeUndefined();
    expect(world.log.lines.join("\n")).toContain(
      `grant get, create and update on configmaps in namespace ${ledgersOf(identity)}`,
    );
  });

  it("without creating Leases in its namespace, a CNF is synced uncoordinated (the function says which grant is missing)", async () => {
    const identity = await identityFrom("on-deployment-ready.yaml", {
      group: "coordination.k8s.io",
      resource: "leases",
      verb: "create",
    });
    expect((await syncAs(identity).handle(deploymentEvent(), world.context())).kind).toBe("done");
    expect(world.held(cnf, ZONES)).toEqual([
      ["lan1", "wan1"],
      ["lan1", "wan1"],
    ]);
    expect(world.log.lines.join("\n")).toContain(
      `grant get, create, update and delete on leases in namespace ${ledgersOf(identity)}`,
    );
  });

  it("fails without listing Pods: the CNF cannot be observed, nothing is applied", async () => {
    const fn = syncAs(
      await identityFrom("on-deployment-ready.yaml", { group: "", resource: "pods", verb: "list" }),
    );
    expect((await fn.handle(deploymentEvent(), world.context())).kind).not.toBe("done");
    expect(world.held(cnf, ZONES)).toEqual([[], []]);
  });
});

describe("egress-group-sync runs with exactly manifests/rbac/egress-group-sync.yaml", () => {
  const world = new EgressWorld();
  const context = (): HandlerContext => ({
    correlationId: randomBytes(4).toString("hex"),
    log: { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} },
    calls: { api: 0, cnf: 0 },
    signal: new AbortController().signal,
  });
  let namespace: string;
  let egress: string;

  beforeAll(async () => {
    namespace = await world.namespace("rbac-egress");
    await world.pod(namespace, "web-1", world.labels({ app: "web" }), { ips: ["100.64.1.5"] });
    egress = world.name("rbac-egress");
    await world.egress(egress, { podSelector: { matchLabels: world.labels({ app: "web" }) } });
  });

  const egressEvent = (): IntakeEvent => ({
    type: "object",
    id: randomBytes(8).toString("hex"),
    action: "update",
    ref: { apiVersion: "crd.antrea.io/v1beta1", kind: "Egress", namespace: "", name: egress },
  });

  it("writes the EgressGroup of an Egress, and a second identical event writes nothing", async () => {
    const identity = await identityFrom("egress-group-sync.yaml");
    const fn = createEgressGroupSync({ kube: () => identity.kube });
    const first = await fn.handle(egressEvent(), context());
    expect(first.kind).toBe("done");
    expect(await world.members(egress)).toEqual([`${namespace}/web-1`]);
    expect(await fn.handle(egressEvent(), context())).toMatchObject({ kind: "done" });
  });

  it("is refused (403) any write outside its role: an Egress, a Pod, a Namespace", async () => {
    const { kube } = await identityFrom("egress-group-sync.yaml");
    const label = { metadata: { labels: { touched: "yes" } } };
    expect(await refusal(kube.mergePatch(PODS, { namespace, name: "web-1" }, label))).toBe(
      "forbidden 403",
    );
    expect(await refusal(kube.delete(EGRESSES, { name: egress }))).toBe("forbidden 403");
    expect(await refusal(kube.mergePatch(NAMESPACES, { name: namespace }, label))).toBe(
      "forbidden 403",
    );
  });

  it("fails without creating EgressGroups: no group appears", async () => {
    await world.kube.delete(EGRESS_GROUPS, { name: egress });
    const { kube } = await identityFrom("egress-group-sync.yaml", {
      group: "sdewan.akraino.org",
      resource: "egressgroups",
      verb: "create",
    });
    const fn = createEgressGroupSync({ kube: () => kube });
    expect((await fn.handle(egressEvent(), context())).kind).not.toBe("done");
    expect(await world.group(egress)).toBeUndefined();
  });
});

describe("validate-admission reads with exactly manifests/rbac/validate-admission.yaml", () => {
  it("performs every read of its policies and of a dry run's plan, and is refused (403) any write", async () => {
    const identity = await identityFrom("validate-admission.yaml");
    const namespace = await newNamespace("rbac-admission");
    const reader = kubeAdmissionReader(identity.kube);
    await expect(reader.listCnfDeployments(namespace, PURPOSE)).resolves.toEqual([]);
    for (const kind of ruleKinds.kinds) {
      await expect(reader.getRule(kind, namespace, "absent")).resolves.toBeNull();
    }
    await expect(reader.listRoleBindings(namespace)).resolves.toEqual([]);
    expect((await reader.listClusterRoleBindings()).length).toBeGreaterThan(0);
    await expect(
      reader.getRole({ kind: "ClusterRole", namespace: "", name: "cluster-admin" }),
    ).resolves.not.toBeNull();
    // A dry run's plan: the CNF's pods and the rules that reference the changed one.
    await expect(identity.kube.list(PODS, { namespace })).resolves.toEqual([]);
    const zone = ruleResource(requireKind("FirewallZone"));
    await expect(identity.kube.list(zone, { namespace })).resolves.toEqual([]);

    expect(
      await refusal(
        identity.kube.create(zone, { metadata: { namespace, name: "z" }, spec: { network: [] } }),
      ),
    ).toBe("forbidden 403");
  });

  it("may get the CNF credentials Secret by name in its own namespace, and no other Secret", async () => {
    const identity = await identityFrom("validate-admission.yaml");
    const own = identity.roleNamespaces.get("sdewan-system") ?? "";
    const get = (namespace: string, name: string) =>
      allowed(identity.kc, { group: "", resource: "secrets", verb: "get", namespace, name });
    expect(await get(own, "sdewan-cnf-credentials")).toBe(true);
    expect(await get(own, "validate-admission-tls")).toBe(false);
    expect(await get(await newNamespace("rbac-admission-other"), "sdewan-cnf-credentials")).toBe(
      false,
    );
    expect(
      await allowed(identity.kc, { group: "", resource: "secrets", verb: "list", namespace: own }),
    ).toBe(false);
  });
});

describe("the event sources (connector, ApiServerSource) with manifests/rbac/event-sources.yaml", () => {
  it("may list and watch every resource the connector routes, and nothing more", async () => {
    const identity = await identityFrom("event-sources.yaml");
    const config = parseAllDocuments(
      readFileSync(new URL("../../manifests/connector/config.yaml", import.meta.url), "utf8"),
    )[0]?.toJS() as { routes: { resources: { apiVersion: string; kind: string }[] }[] };
    const routed = config.routes.flatMap((r) => r.resources);
    expect(routed.length).toBeGreaterThan(0);
    const plural = (kind: string): string =>
      (
        ({
          Deployment: "deployments",
          Pod: "pods",
          Namespace: "namespaces",
          Egress: "egresses",
          NetworkPolicy: "networkpolicies",
          Service: "services",
          EndpointSlice: "endpointslices",
          Export: "exports",
          Import: "imports",
          Peer: "peers",
        }) as Record<string, string>
      )[kind] ?? requireKind(kind).plural;
    for (const { apiVersion, kind } of routed) {
      const group = apiVersion.includes("/") ? (apiVersion.split("/")[0] ?? "") : "";
      for (const verb of ["list", "watch"]) {
        expect([
          kind,
          verb,
          await allowed(identity.kc, { group, resource: plural(kind), verb }),
        ]).toEqual([kind, verb, true]);
      }
      for (const verb of ["create", "update", "patch", "delete"]) {
        expect([
          kind,
          verb,
          await allowed(identity.kc, { group, resource: plural(kind), verb }),
        ]).toEqual([kind, verb, false]);
      }
    }
    expect(await allowed(identity.kc, { group: "", resource: "secrets", verb: "list" })).toBe(
      false,
    );
  });
});

describe("network-policy-sync runs with exactly manifests/rbac/network-policy-sync.yaml", () => {
  const world = new NetpolWorld();
  let namespace: string;

  beforeAll(async () => {
    namespace = await world.namespace("rbac-netpol");
    await world.pod(namespace, "web", { app: "web" }, { ip: "100.64.99.1" });
    await world.policy(namespace, "deny", { podSelector: {} });
  });

  it("writes the tables of a policy and of the resync, and a second identical event writes nothing", async () => {
    const identity = await identityFrom("network-policy-sync.yaml");
    const fn = createNetworkPolicySync({ kube: () => identity.kube });
    const event = world.policyEvent(namespace, "deny");
    expect(await world.send(event, fn)).toMatchObject({ kind: "done" });
    expect(await world.kube.get(NETPOL_ENDPOINTS, { namespace, name: "web" })).toBeDefined();
    // Its Event on the Pod, written with the role's own token (a refused one would be dropped).
    const events = (await world.kube.list(EVENTS, { namespace })) as unknown as {
      reason: string;
      regarding: { name: string };
    }[];
    expect(events.map((e) => `${e.regarding.name} ${e.reason}`)).toContain(
      "web EndpointTablesWritten",
    );
    expect(await world.send(world.resyncEvent(), fn)).toMatchObject({ kind: "done" });
    expect(await world.send(world.podEvent(namespace, "web"), fn)).toMatchObject({
      kind: "done",
      result: expect.stringMatching(/^unchanged/) as unknown,
    });
  });

  it("is refused (403) any write outside its role: a NetworkPolicy, a Pod, a Namespace", async () => {
    const { kube } = await identityFrom("network-policy-sync.yaml");
    const label = { metadata: { labels: { touched: "yes" } } };
    expect(await refusal(kube.mergePatch(PODS, { namespace, name: "web" }, label))).toBe(
      "forbidden 403",
    );
    expect(await refusal(kube.delete(NETWORK_POLICIES, { namespace, name: "deny" }))).toBe(
      "forbidden 403",
    );
    expect(await refusal(kube.mergePatch(NAMESPACES, { name: namespace }, label))).toBe(
      "forbidden 403",
    );
  });

  it("fails without creating endpoint tables: no table appears", async () => {
    await world.kube.delete(NETPOL_ENDPOINTS, { namespace, name: "web" });
    const { kube } = await identityFrom("network-policy-sync.yaml", {
      group: "netpol.sdewan.akraino.org",
      resource: "networkpolicyendpoints",
      verb: "create",
    });
    const fn = createNetworkPolicySync({ kube: () => kube });
    expect((await world.send(world.policyEvent(namespace, "deny"), fn)).kind).not.toBe("done");
    expect(await world.kube.get(NETPOL_ENDPOINTS, { namespace, name: "web" })).toBeUndefined();
  });
});

describe("the netpol node agent reads with exactly manifests/rbac/netpol-node-agent.yaml", () => {
  const world = new NetpolWorld();
  const node = `rbac-node-${randomBytes(3).toString("hex")}`;
  let namespace: string;
  const loaded: string[] = [];
  const syncAs = (kube: KubeClient) =>
    syncNode(kubeNodeAgentStore(kube), {
      node,
      ruleset: { table: "sdewan_netpol", podInterfaces: ["sdewanbr0"] },
      apply: (script) => {
        loaded.push(script);
        return Promise.resolve();
      },
    });

  beforeAll(async () => {
    namespace = await world.namespace("rbac-agent");
    const on = (ip: string) => ({ ip, nodeName: node });
    await world.pod(namespace, "web", { app: "web" }, on("10.199.1.1"));
    await world.pod(namespace, "client", { app: "client" }, on("10.199.1.2"));
    await world.policy(namespace, "from-clients", {
      podSelector: { matchLabels: { app: "web" } },
      ingress: [{ from: [{ podSelector: { matchLabels: { app: "client" } } }] }],
    });
    expect(await world.send(world.policyEvent(namespace, "from-clients"))).toMatchObject({
      kind: "done",
    });
  });

  it("syncs its node with the role's own token: its Pods, their tables, the peer sets, the policies", async () => {
    const { kube } = await identityFrom("netpol-node-agent.yaml");
    const result = await syncAs(kube);
    expect(result.pods).toMatchObject({ tables: 1, unselected: 1 });
    expect(result.problems).toEqual([]);
    expect(result.plan.groups.size).toBe(1);
    expect(loaded.at(-1)).toBe(result.script);
  });

  it("may watch what it watches, and is refused (403) any write", async () => {
    const identity = await identityFrom("netpol-node-agent.yaml");
    for (const [group, resource] of [
      ["", "pods"],
      ["netpol.sdewan.akraino.org", "networkpolicyendpoints"],
      ["netpol.sdewan.akraino.org", "networkpolicypeersets"],
      ["networking.k8s.io", "networkpolicies"],
    ] as const) {
      expect([resource, await allowed(identity.kc, { group, resource, verb: "watch" })]).toEqual([
        resource,
        true,
      ]);
    }
    const label = { metadata: { labels: { touched: "yes" } } };
    const { kube } = identity;
    expect(
      await refusal(kube.mergePatch(NETPOL_ENDPOINTS, { namespace, name: "web" }, label)),
    ).toBe("forbidden 403");
    expect(await refusal(kube.mergePatch(PODS, { namespace, name: "web" }, label))).toBe(
      "forbidden 403",
    );
    expect(await refusal(kube.delete(NETWORK_POLICIES, { namespace, name: "from-clients" }))).toBe(
      "forbidden 403",
    );
    expect(await allowed(identity.kc, { group: "", resource: "secrets", verb: "get" })).toBe(false);
  });

  it("fails without listing NetworkPolicies: a Pod without a table cannot be judged, nothing is loaded", async () => {
    const { kube } = await identityFrom("netpol-node-agent.yaml", {
      group: "networking.k8s.io",
      resource: "networkpolicies",
      verb: "list",
    });
    const before = loaded.length;
    await expect(syncAs(kube)).rejects.toMatchObject({ code: "forbidden" });
    expect(loaded).toHaveLength(before);
  });
});
