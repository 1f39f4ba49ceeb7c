// One bad object never breaks the others (issue 24, section 3), for network-policy-sync's resync:
// a Pod whose enforcement table the API server refuses to write (a ValidatingAdmissionPolicy, as
// a policy engine or a quota would) sits beside a Pod of the same policy. The refused table is
// reported on its Pod and skipped; the other Pod's table is written; the resync answers 202.
import { EVENTS, NETPOL_ENDPOINTS, type KubeObject } from "../../shared/kube/index.js";
import type { EventFunction } from "../../shared/runtime/function.js";
import { NetpolWorld } from "./netpol-harness.js";
import { identityFrom } from "./support/identity.js";
import { refuseWrites } from "./support/refuse-writes.js";

const world = new NetpolWorld();
let ns: string;
let removePolicy: () => Promise<void>;

interface Recorded extends KubeObject {
  reason?: string;
  note?: string;
  type?: string;
  regarding?: { kind?: string; name?: string };
}

const endpointNames = async (): Promise<string[]> =>
  (await world.kube.list(NETPOL_ENDPOINTS, { namespace: ns })).map((t) => t.metadata.name).sort();

/** network-policy-sync with exactly its manifests/rbac role: what it reports, it may write. */
let fn: EventFunction;

beforeAll(async () => {
  fn = world.instance((await identityFrom("network-policy-sync.yaml")).kube);
  ns = await world.namespace("isolation");
  await world.policy(ns, "web-ingress", {
    podSelector: { matchLabels: { app: "web" } },
    policyTypes: ["Ingress"],
    ingress: [{ from: [{ podSelector: { matchLabels: { app: "client" } } }] }],
  });
  await world.pod(ns, "probe", { app: "web" }, { ip: "100.64.77.9" });
  // The probe's table exists before the policy: the probe is an update the policy refuses.
  expect(await world.send(world.resyncEvent())).toMatchObject({ kind: "done" });
  expect(await endpointNames()).toEqual(["probe"]);
  let probes = 0;
  removePolicy = await refuseWrites({
    name: `frozen-tables-${ns}`,
    resources: [
      {
        apiGroups: ["netpol.sdewan.akraino.org"],
        resources: ["networkpolicyendpoints"],
        operations: ["CREATE", "UPDATE"],
      },
    ],
    admits: "!(object.metadata.name in ['blocked', 'probe'])",
    message: "this Pod's table is frozen",
    namespace: ns,
    probe: async () => {
      probes += 1;
      const labels = { "netpol.sdewan.test/probe": String(probes) };
      return world.kube
        .mergePatch(NETPOL_ENDPOINTS, { namespace: ns, name: "probe" }, { metadata: { labels } })
        .then(() => false)
        .catch(() => true);
    },
  });
  await world.deletePod(ns, "probe");
  await world.pod(ns, "blocked", { app: "web" }, { ip: "100.64.77.1" });
  await world.pod(ns, "fine", { app: "web" }, { ip: "100.64.77.2" });
});
afterAll(() => removePolicy());

it("the resync answers 202: the other Pod's table is written, the refused one is reported on its Pod", async () => {
  expect(await world.send(world.resyncEvent(), fn)).toMatchObject({ kind: "done" });
  expect(await endpointNames()).toEqual(["fine"]);
  const events = ((await world.kube.list(EVENTS, { namespace: ns })) as Recorded[]).filter(
    (e) => e.regarding?.kind === "Pod" && e.regarding.name === "blocked",
  );
  expect(events.map((e) => [e.type, e.reason])).toEqual([["Warning", "ReconcileFailed"]]);
  expect(events[0]?.note).toMatch(/this Pod's table is frozen/);
});
