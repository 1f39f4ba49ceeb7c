// Property: a Pod event's Pod-only path (plan-pod-event.ts: its endpoint table and its entry in
// the peer sets that list it or should) ends with exactly the tables a full recompute of the new
// world writes, byte for byte, labels included. Random worlds (arbitraries.ts), stored by a
// resync; then random Pods relabelled, re-addressed, moved through phases or deleted, one event
// each. Also counts how often the Pod-only path applied (it must, or this tests nothing).
import fc from "fast-check";
import type { RefPod, RefWorld } from "../../../dev/netpol-oracle/reference.js";
import { applyNetpolTrigger } from "../../../shared/netpol/index.js";
import { podAt, world } from "./arbitraries.js";
import { MemoryNetpolStore } from "./memory-store.js";

const SEED = 20261201;
const CASES = 1_500;

type Raw = ConstructorParameters<typeof MemoryNetpolStore>[0];

const withMeta = (w: RefWorld) => ({
  policies: w.policies.map((p, i) => ({
    ...p,
    metadata: { ...p.metadata, uid: `policy-uid-${i}`, generation: 1 },
  })) as unknown as Raw,
  pods: w.pods.map((p) => ({
    ...p,
    metadata: { ...p.metadata, uid: `uid-${p.metadata.name}`, resourceVersion: "1" },
  })) as unknown as Raw,
  namespaces: w.namespaces as unknown as Raw,
});

async function fullRecompute(raw: ReturnType<typeof withMeta>): Promise<MemoryNetpolStore> {
  const store = new MemoryNetpolStore(raw.policies, raw.pods, raw.namespaces);
  await applyNetpolTrigger({ kind: "resync" }, store);
  return store;
}

const change = fc.record({
  pod: fc.nat(),
  deleted: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
  replacement: fc.nat({ max: 5 }).chain((i) => podAt(i)),
});

describe("a Pod event's Pod-only path ends where a full recompute ends", () => {
  it(`agrees on ${CASES} generated worlds with 1-3 Pod changes each (seed ${SEED})`, async () => {
    const paths = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        world,
        fc.array(change, { minLength: 1, maxLength: 3 }),
        async (w, changes) => {
          const raw = withMeta(w);
          const store = await fullRecompute(raw);
          let version = 1;
          for (const c of changes) {
            if (raw.pods.length === 0) break;
            const index = c.pod % raw.pods.length;
            const old = raw.pods[index] as unknown as RefPod;
            const { namespace, name } = old.metadata;
            version += 1;
            if (c.deleted) raw.pods.splice(index, 1);
            else {
              raw.pods[index] = {
                ...c.replacement,
                metadata: {
                  ...c.replacement.metadata,
                  namespace,
                  name,
                  uid: `uid-${name}`,
                  resourceVersion: String(version),
                },
              } as unknown as Raw[number];
            }
            store.pods = raw.pods;
            const result = await applyNetpolTrigger({ kind: "pod", namespace, name }, store);
            // Reasons without the table names, so they add up.
            const path = result.path.replace(/ (ns-[a-c]\/)?policy-\d+| \([^)]*\)/g, "");
            paths.set(path, (paths.get(path) ?? 0) + 1);
          }
          const expected = await fullRecompute(raw);
          expect(store.snapshot()).toBe(expected.snapshot());
        },
      ),
      { seed: SEED, numRuns: CASES, endOnFailure: false },
    );
    const total = [...paths.values()].reduce((a, b) => a + b, 0);
    const fast = paths.get("pod") ?? 0;
    console.log(
      `netpol Pod events: ${total}, Pod-only path ${fast}; full recompute: ${JSON.stringify(
        Object.fromEntries([...paths].filter(([k]) => k !== "pod").sort(([, a], [, b]) => b - a)),
      )}`,
    );
    expect(fast / total).toBeGreaterThan(0.5);
  });
});

const namespaceLabels = fc.dictionary(
  fc.constantFrom("app", "role", "tier"),
  fc.constantFrom("a", "b", ""),
  { maxKeys: 3 },
);
const NAMESPACE_CASES = 500;

// A Namespace event reads only the peer sets labelled as namespace-selected (and the labelled
// endpoint tables): relabelling Namespaces must still end where a full recompute ends.
describe("a Namespace event's labelled peer sets end where a full recompute ends", () => {
  it(`agrees on ${NAMESPACE_CASES} generated worlds with 1-2 Namespaces relabelled (seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(
        world,
        fc.array(fc.record({ namespace: fc.nat(), labels: namespaceLabels }), {
          minLength: 1,
          maxLength: 2,
        }),
        async (w, changes) => {
          const raw = withMeta(w);
          const store = await fullRecompute(raw);
          for (const c of changes) {
            const index = c.namespace % raw.namespaces.length;
            const old = raw.namespaces[index] as unknown as { metadata: { name: string } };
            const name = old.metadata.name;
            raw.namespaces[index] = { metadata: { name, labels: c.labels } };
            store.namespaces = raw.namespaces;
            store.requests.length = 0;
            await applyNetpolTrigger({ kind: "namespace", name }, store);
            expect(store.requests).not.toContain("list peerSet");
          }
          const expected = await fullRecompute(raw);
          expect(store.snapshot()).toBe(expected.snapshot());
        },
      ),
      { seed: SEED, numRuns: NAMESPACE_CASES, endOnFailure: false },
    );
  });
});
