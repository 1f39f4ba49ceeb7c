// The per-CNF sync Lease's pure rules (ADR 0008): when a held Lease covers a sync, when it must
// wait, when it is taken over.
import {
  cnfLeaseName,
  cnfLeaseObject,
  decideHeldLease,
  writtenBefore,
} from "../../../shared/sync/plan-cnf-lease.js";
import { microTime } from "../../../shared/core/micro-time.js";
import type { Lease } from "../../../shared/core/objects.js";

const NOW = "2026-11-25T12:00:30.000Z";

function lease(resourceVersion: string | undefined, spec: Lease["spec"]): Lease {
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: "cnf-sync-x", ...(resourceVersion ? { resourceVersion } : {}) },
    spec,
  };
}

const held = (resourceVersion: string | undefined, renewTime = "2026-11-25T12:00:20.000000Z") =>
  lease(resourceVersion, {
    holderIdentity: "pod-a/1",
    leaseDurationSeconds: 30,
    acquireTime: renewTime,
    renewTime,
  });

describe("a sync that finds its CNF's Lease held", () => {
  it.each([
    ["the change was written before the holder took the Lease", "120", "100", "covered"],
    ["the change was written after the holder took the Lease", "120", "130", "wait"],
    ["the change is the Lease's own version (cannot be: not before it)", "120", "120", "wait"],
    ["there is no triggering object (a resync, a deleted Pod)", "120", undefined, "wait"],
    ["versions that are not numbers cannot be ordered", "a1", "a0", "wait"],
  ])("%s -> %s", (_, leaseVersion, triggerVersion, expected) => {
    expect(decideHeldLease({ lease: held(leaseVersion), now: NOW, triggerVersion })).toBe(expected);
  });

  it("orders versions numerically, not as text (99 before 100)", () => {
    expect(writtenBefore("99", "100")).toBe(true);
    expect(writtenBefore("100", "99")).toBe(false);
    expect(writtenBefore("", "99")).toBeUndefined();
    expect(writtenBefore("12345678901234567890123", "12345678901234567890124")).toBe(true);
  });

  it("takes over a Lease whose holder let it expire, even when it would cover", () => {
    const expired = held("120", "2026-11-25T11:59:59.000000Z");
    expect(decideHeldLease({ lease: expired, now: NOW, triggerVersion: "100" })).toBe("take");
  });

  it("takes over a Lease it cannot read (no times, no holder): it must never block syncs for good", () => {
    expect(decideHeldLease({ lease: lease("120", {}), now: NOW, triggerVersion: "100" })).toBe(
      "take",
    );
    const noHolder = lease("120", { leaseDurationSeconds: 30, renewTime: "2026-11-25T12:00:20Z" });
    expect(decideHeldLease({ lease: noHolder, now: NOW, triggerVersion: "130" })).toBe("take");
  });
});

describe("the Lease object", () => {
  it("is named by a hash of namespace and purpose: a valid name for any purpose label value", () => {
    const name = cnfLeaseName({ namespace: "ns1", purpose: "Edge_CNF.v2" });
    expect(name).toMatch(/^cnf-sync-[0-9a-f]{32}$/);
    expect(cnfLeaseName({ namespace: "ns1", purpose: "Edge_CNF.v2" })).toBe(name);
    expect(cnfLeaseName({ namespace: "ns1", purpose: "edge" })).not.toBe(name);
    expect(cnfLeaseName({ namespace: "ns2", purpose: "Edge_CNF.v2" })).not.toBe(name);
  });

  it("says which CNF it is for and writes MicroTime with six fractional digits", () => {
    const object = cnfLeaseObject("state", { namespace: "ns1", purpose: "edge" }, "me", 30, NOW);
    expect(object.metadata.labels["sdewan.akraino.org/cnf-namespace"]).toBe("ns1");
    expect(object.metadata.annotations["sdewan.akraino.org/cnf-purpose"]).toBe("edge");
    expect(object.spec).toEqual({
      holderIdentity: "me",
      leaseDurationSeconds: 30,
      acquireTime: "2026-11-25T12:00:30.000000Z",
      renewTime: "2026-11-25T12:00:30.000000Z",
    });
    expect(microTime("2026-11-25T12:00:30.123Z")).toBe("2026-11-25T12:00:30.123000Z");
  });
});
