// Leases are derived from every Import's spec.targetPort on each event: the older Import keeps a
// contested port, a port we leased moves, a port the user asked for is a conflict.
import {
  leaseStart,
  planLeases,
  PORT_END,
  PORT_MIN,
  type LeaseClaim,
} from "../../../shared/clusterlink/plan-lease.js";

let n = 0;
const claim = (over: Partial<LeaseClaim> & { key: string }): LeaseClaim => ({
  uid: `uid-${over.key}`,
  creationTimestamp: `2026-01-01T00:00:${String(10 + (n++ % 40)).padStart(2, "0")}Z`,
  targetPort: 0,
  leasedByUs: false,
  ...over,
});

describe("planLeases", () => {
  it("an Import without targetPort is leased a port in [1024, 49152), starting where its uid says", () => {
    const d = planLeases([claim({ key: "app/db" })]).get("app/db");
    expect(d).toEqual({ kind: "lease", port: leaseStart("uid-app/db"), previous: 0 });
    expect(leaseStart("uid-app/db")).toBeGreaterThanOrEqual(PORT_MIN);
    expect(leaseStart("uid-app/db")).toBeLessThan(PORT_END);
  });

  it("a held port stays held (a repeat event changes nothing)", () => {
    const d = planLeases([claim({ key: "app/db", targetPort: 30000, leasedByUs: true })]);
    expect(d.get("app/db")).toEqual({ kind: "held", port: 30000 });
  });

  it("two Imports we leased the same port: the older keeps it, the younger is re-leased elsewhere", () => {
    const old = claim({
      key: "a/old",
      targetPort: 30000,
      leasedByUs: true,
      creationTimestamp: "2026-01-01T00:00:00Z",
    });
    const young = claim({
      key: "a/young",
      targetPort: 30000,
      leasedByUs: true,
      creationTimestamp: "2026-01-01T00:00:01Z",
    });
    for (const order of [
      [old, young],
      [young, old],
    ]) {
      const d = planLeases(order);
      expect(d.get("a/old")).toEqual({ kind: "held", port: 30000 });
      expect(d.get("a/young")).toMatchObject({ kind: "lease", previous: 30000 });
      expect(d.get("a/young")).not.toMatchObject({ port: 30000 });
    }
  });

  it("same creation second: the smaller uid keeps the port, whichever instance decides", () => {
    const t = "2026-01-01T00:00:00Z";
    const a = claim({
      key: "a/x",
      uid: "aaa",
      targetPort: 30000,
      leasedByUs: true,
      creationTimestamp: t,
    });
    const b = claim({
      key: "a/y",
      uid: "bbb",
      targetPort: 30000,
      leasedByUs: true,
      creationTimestamp: t,
    });
    expect(planLeases([b, a]).get("a/x")).toEqual({ kind: "held", port: 30000 });
    expect(planLeases([a, b]).get("a/y")).toMatchObject({ kind: "lease" });
  });

  it("a requested port held by an older Import is a conflict with upstream's wording source", () => {
    const holder = claim({
      key: "app/db",
      targetPort: 27743,
      leasedByUs: true,
      creationTimestamp: "2026-01-01T00:00:00Z",
    });
    const asker = claim({
      key: "app/other",
      targetPort: 27743,
      creationTimestamp: "2026-01-01T00:00:05Z",
    });
    expect(planLeases([asker, holder]).get("app/other")).toEqual({
      kind: "conflict",
      port: 27743,
      holder: "app/db",
    });
  });

  it("the loser of a requested port gets it once the holder is gone (no memory to go stale)", () => {
    const asker = claim({ key: "app/other", targetPort: 27743 });
    expect(planLeases([asker]).get("app/other")).toEqual({ kind: "held", port: 27743 });
  });

  it("a requested port outside the range is refused; one we leased there is moved", () => {
    expect(planLeases([claim({ key: "a/low", targetPort: 80 })]).get("a/low")).toEqual({
      kind: "outOfRange",
      port: 80,
    });
    expect(
      planLeases([claim({ key: "a/ours", targetPort: 80, leasedByUs: true })]).get("a/ours"),
    ).toMatchObject({ kind: "lease", previous: 80 });
  });

  it("200 new Imports get 200 distinct ports", () => {
    const claims = Array.from({ length: 200 }, (_, i) => claim({ key: `ns/i${i}`, uid: `u-${i}` }));
    const ports = [...planLeases(claims).values()].map((d) => (d.kind === "lease" ? d.port : -1));
    expect(new Set(ports).size).toBe(200);
    expect(ports.every((p) => p >= PORT_MIN && p < PORT_END)).toBe(true);
  });
});
