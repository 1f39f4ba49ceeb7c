// One bad object never breaks the others (issue 24, section 3), for egress-group-sync's resync:
// an Egress whose selector cannot be evaluated (stored with no webhook in front of Antrea's CRD)
// and one whose EgressGroup the API server refuses to write (a ValidatingAdmissionPolicy) sit
// beside a good Egress. Each bad one is reported on its group; the good group converges; the
// resync answers 202. Egresses and groups are cluster-scoped: every name carries this file's run.
import { EGRESS_GROUPS, EVENTS, type KubeObject } from "../../shared/kube/index.js";
import { EgressWorld, RUN_LABEL } from "./egress-harness.js";
import { refuseWrites } from "./support/refuse-writes.js";

const world = new EgressWorld();
const fine = world.name("fine");
const blocked = world.name("blocked");
const probe = world.name("probe");
const invalid = world.name("invalid");
let removePolicy: () => Promise<void>;

interface Recorded extends KubeObject {
  reason?: string;
  note?: string;
  type?: string;
  regarding?: { kind?: string; name?: string };
}

beforeAll(async () => {
  const ns = await world.namespace("isolation");
  await world.pod(ns, "web", { app: "web" });
  const selecting = { podSelector: { matchLabels: { [RUN_LABEL]: world.run, app: "web" } } };
  for (const name of [fine, blocked, probe]) await world.egress(name, selecting);
  await world.egress(invalid, {
    podSelector: { matchExpressions: [{ key: "app", operator: "In", values: [] }] },
  });
  // The probe's group exists before the policy: the probe is an update the policy refuses.
  await world.egressEvent(probe, "add");
  let probes = 0;
  removePolicy = await refuseWrites({
    name: `frozen-groups-${world.run}`,
    resources: [
      {
        apiGroups: ["sdewan.akraino.org"],
        resources: ["egressgroups"],
        operations: ["CREATE", "UPDATE"],
      },
    ],
    admits: `!(object.metadata.name in ['${blocked}', '${probe}'])`,
    message: "this EgressGroup is frozen",
    probe: async () => {
      probes += 1;
      const labels = { "egress.sdewan.test/probe": String(probes) };
      return world.kube
        .mergePatch(EGRESS_GROUPS, { name: probe }, { metadata: { labels } })
        .then(() => false)
        .catch(() => true);
    },
  });
  await world.deleteEgress(probe);
});
afterAll(() => removePolicy());

it("the resync answers 202: the good group converges, the bad ones are reported on their groups", async () => {
  expect(await world.resync()).toMatchObject({ kind: "done" });
  expect(await world.members(fine)).toEqual([expect.stringMatching(/\/web$/)]);
  const stalled = await world.group(invalid);
  expect(stalled?.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
    ["Ready", "False", "InvalidSelector"],
    ["Stalled", "True", "InvalidSelector"],
  ]);
  expect(await world.group(blocked)).toBeUndefined();
  const events = ((await world.kube.list(EVENTS, { namespace: "default" })) as Recorded[]).filter(
    (e) => e.regarding?.kind === "EgressGroup" && e.regarding.name === blocked,
  );
  expect(events.map((e) => [e.type, e.reason])).toEqual([["Warning", "ReconcileFailed"]]);
  expect(events[0]?.note).toMatch(/this EgressGroup is frozen/);
});
