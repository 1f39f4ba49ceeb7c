// Scale against the real API server: a few thousand Pods over a few hundred Namespaces and a few
// dozen Egresses, one full recompute (resync) checked against independently computed groups, with
// its time and API requests printed; and the largest supported group stored as one object.
import pLimit from "p-limit";
import { podAddress } from "../../dev/control-plane/addresses.js";
import { groupObjectFromDesired } from "../../shared/egress/group-object.js";
import type { AppliedTo, GroupMember } from "../../shared/egress/membership.js";
import type { DesiredEgressGroup } from "../../shared/egress/plan-group.js";
import {
  API_SERVER_OBJECT_LIMIT_BYTES,
  DEFAULT_GROUP_LIMITS,
  serializedMembersBytes,
} from "../../shared/egress/size.js";
import { EGRESS_GROUPS } from "../../shared/kube/index.js";
import type { EgressGroup } from "../../shared/kinds/index.js";
import { EgressWorld, RUN_LABEL } from "./egress-harness.js";

const NAMESPACES = 200;
const PODS_PER_NAMESPACE = 15; // 3,000 Pods
const APPS = 20;
const TEAMS = 10;

const world = new EgressWorld();
const run = { [RUN_LABEL]: world.run };

interface CreatedPod {
  readonly key: string;
  readonly app: string;
  readonly team: string;
  readonly canary: boolean;
  readonly eligible: boolean;
}

interface Scenario {
  readonly appliedTo: AppliedTo;
  /** Independent of shared/egress: who should be in the group, from how the Pods were made. */
  readonly expects: (pod: CreatedPod) => boolean;
}

const created: CreatedPod[] = [];

function scenarios(): Map<string, Scenario> {
  const list = new Map<string, Scenario>();
  for (let a = 0; a < APPS; a += 1) {
    list.set(world.name(`app-${a}`), {
      appliedTo: { podSelector: { matchLabels: { ...run, app: `a${a}` } } },
      expects: (p) => p.eligible && p.app === `a${a}`,
    });
  }
  for (let t = 0; t < TEAMS; t += 1) {
    list.set(world.name(`team-${t}`), {
      appliedTo: { namespaceSelector: { matchLabels: { ...run, team: `t${t}` } } },
      expects: (p) => p.eligible && p.team === `t${t}`,
    });
    list.set(world.name(`team-canary-${t}`), {
      appliedTo: {
        podSelector: { matchExpressions: [{ key: "canary", operator: "Exists" }] },
        namespaceSelector: { matchLabels: { ...run, team: `t${t}` } },
      },
      expects: (p) => p.eligible && p.team === `t${t}` && p.canary,
    });
  }
  list.set(world.name("not-a0-a1"), {
    appliedTo: {
      podSelector: {
        matchLabels: run,
        matchExpressions: [
          { key: "app", operator: "NotIn", values: ["a0", "a1"] },
          { key: "canary", operator: "DoesNotExist" },
        ],
      },
    },
    expects: (p) => p.eligible && p.app !== "a0" && p.app !== "a1" && !p.canary,
  });
  list.set(world.name("everyone"), {
    appliedTo: { podSelector: { matchLabels: run } },
    expects: (p) => p.eligible,
  });
  return list;
}

async function createWorld(): Promise<void> {
  const limit = pLimit(24);
  const namespaces = await Promise.all(
    Array.from({ length: NAMESPACES }, (_, n) =>
      limit(() => world.namespace(`s${n}`, { team: `t${n % TEAMS}` })),
    ),
  );
  await Promise.all(
    namespaces.flatMap((ns, n) =>
      Array.from({ length: PODS_PER_NAMESPACE }, (_, i) =>
        limit(async () => {
          const app = `a${(n + i) % APPS}`;
          const canary = i % 5 === 0;
          const terminated = i % 7 === 3;
          // Only every third Pod gets a status write (IP, Running): the others stay Pending
          // without an IP, which still makes them members, and setup needs fewer requests.
          const withIp = i % 3 === 0;
          const name = `p${i}`;
          await world.pod(
            ns,
            name,
            { app, ...(canary ? { canary: "true" } : {}) },
            {
              phase: terminated ? "Succeeded" : "Running",
              ips: [podAddress(n * PODS_PER_NAMESPACE + i)],
              writeStatus: terminated || withIp,
            },
          );
          created.push({
            key: `${ns}/${name}`,
            app,
            team: `t${n % TEAMS}`,
            canary,
            eligible: !terminated,
          });
        }),
      ),
    ),
  );
}

describe(`${NAMESPACES * PODS_PER_NAMESPACE} Pods in ${NAMESPACES} Namespaces`, () => {
  const egresses = scenarios();

  beforeAll(async () => {
    const started = performance.now();
    await createWorld();
    await Promise.all([...egresses].map(([name, s]) => world.egress(name, s.appliedTo)));
    console.log(
      `egress scale: created ${created.length} Pods, ${NAMESPACES} Namespaces, ${egresses.size} Egresses in ${Math.round(performance.now() - started)} ms`,
    );
  }, 300_000);

  it("one resync computes every group correctly, in seconds", async () => {
    world.calls.api = 0;
    const started = performance.now();
    const outcome = await world.resync();
    const ms = Math.round(performance.now() - started);
    const requests = world.calls.api;
    expect(outcome).toMatchObject({ kind: "done" });

    for (const [name, scenario] of egresses) {
      const expected = created
        .filter(scenario.expects)
        .map((p) => p.key)
        .sort();
      expect({ name, members: await world.members(name) }).toEqual({ name, members: expected });
    }
    console.log(
      `egress scale: full recompute (resync) of ${egresses.size} groups: ${ms} ms, ${requests} API requests; ${JSON.stringify(outcome)}`,
    );
    expect(ms).toBeLessThan(20_000);
  }, 120_000);

  it("a second resync writes nothing (every resourceVersion kept)", async () => {
    const versions = async () =>
      Promise.all(
        [...egresses.keys()].map(
          async (name) => (await world.group(name))?.metadata.resourceVersion,
        ),
      );
    const before = await versions();
    world.calls.api = 0;
    const started = performance.now();
    await world.resync();
    const ms = Math.round(performance.now() - started);
    expect(await versions()).toEqual(before);
    console.log(`egress scale: unchanged resync: ${ms} ms, ${world.calls.api} API requests`);
  }, 120_000);

  it("one Pod relabel is one Pod event that recomputes exactly the groups it was or is in", async () => {
    const pod = created.find((p) => p.eligible && !p.canary && p.app === "a5");
    if (pod === undefined) throw new Error("fixture has no a5 Pod");
    const [ns = "", name = ""] = pod.key.split("/");
    await world.relabelPod(ns, name, { app: "a6" });
    world.calls.api = 0;
    const started = performance.now();
    const outcome = await world.podEvent(ns, name);
    const ms = Math.round(performance.now() - started);
    // Every group that selects it now or listed it: its old and new app group, its team group,
    // "everyone" and "not-a0-a1". Another test file's resync may have written first, so the
    // split between updated and unchanged is not asserted.
    const touched = [...egresses.values()].filter(
      (g) => g.expects(pod) || g.expects({ ...pod, app: "a6" }),
    ).length;
    expect(touched).toBe(5);
    expect(outcome).toMatchObject({
      kind: "done",
      result: expect.stringMatching(new RegExp(`^${touched} EgressGroups recomputed: `)) as unknown,
    });
    expect(await world.members(world.name("app-6"))).toContain(pod.key);
    expect(await world.members(world.name("app-5"))).not.toContain(pod.key);
    console.log(
      `egress scale: pod event -> ${touched} groups recomputed: ${ms} ms, ${world.calls.api} API requests`,
    );
  }, 60_000);
});

describe("the largest supported group is one object the API server stores", () => {
  const owner = {
    apiVersion: "crd.antrea.io/v1beta1",
    kind: "Egress",
    uid: "00000000-0000-0000-0000-000000000001",
    controller: true,
  };

  function group(name: string, members: GroupMember[]): DesiredEgressGroup {
    return {
      name,
      ownerReference: { ...owner, name },
      content: { egressGeneration: 1, memberCount: members.length, members },
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "MembersComputed",
          message: "m",
          observedGeneration: 1,
          lastTransitionTime: "2030-01-01T00:00:00Z",
        },
      ],
    };
  }

  it.each<[string, number, (i: number) => GroupMember]>([
    [
      `${DEFAULT_GROUP_LIMITS.maxMembers} realistic dual-stack members`,
      DEFAULT_GROUP_LIMITS.maxMembers,
      (i) => ({
        pod: {
          name: `frontend-7c9d8f6b5d-${i.toString(36).padStart(5, "x")}`,
          namespace: "team-payments-prod",
        },
        nodeName: "ip-10-0-123-45.eu-west-1.compute.internal",
        ips: ["100.64.123.45", "fd00:10:244:7b::2d"],
      }),
    ],
    [
      "members filling the whole 1 MiB byte budget with maximal names",
      1_464,
      (i) => ({
        pod: { name: `${i}`.padStart(253, "p"), namespace: "n".repeat(63) },
        nodeName: "x".repeat(253),
        ips: [
          "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255",
          "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        ],
      }),
    ],
  ])(
    "%s: created, read back whole, under the etcd limit",
    async (_title, count, make) => {
      const members = Array.from({ length: count }, (_, i) => make(i));
      expect(serializedMembersBytes(members)).toBeLessThanOrEqual(
        DEFAULT_GROUP_LIMITS.maxMemberBytes,
      );
      const name = world.name(`largest-${count}`);
      // The create reply is the stored object; no separate read, which a concurrent resync of
      // another test file could race (this group has no Egress, so a resync deletes it).
      const stored = (await world.kube.create(
        EGRESS_GROUPS,
        groupObjectFromDesired(group(name, members)),
      )) as EgressGroup;
      expect(stored?.status?.memberCount).toBe(count);
      expect(stored?.status?.members).toHaveLength(count);
      const bytes = Buffer.byteLength(JSON.stringify(stored));
      console.log(
        `egress scale: ${count}-member group stored as ${bytes} bytes of JSON (${Math.round((100 * bytes) / API_SERVER_OBJECT_LIMIT_BYTES)}% of the 1.5 MiB limit)`,
      );
      expect(bytes).toBeLessThan(API_SERVER_OBJECT_LIMIT_BYTES);
      await world.kube.delete(EGRESS_GROUPS, { name });
    },
    60_000,
  );
});
