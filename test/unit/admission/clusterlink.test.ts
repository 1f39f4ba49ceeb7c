// Policy clusterlink-spec: ClusterLink objects whose spec cannot work are refused with what to
// fix; metadata-only updates and deletes are never blocked.
import { planAdmission } from "../../../shared/admission/plan-admission.js";
import { EMPTY_SNAPSHOT } from "../../../shared/admission/snapshot.js";
import { denialMessage, type Verdict } from "../../../shared/admission/verdict.js";
import { objectOf, requestOf } from "./fixtures.js";

const GROUP = "clusterlink.net";
const source = { peer: "east", exportName: "db", exportNamespace: "data" };
const selector = {
  workloadSelector: { matchLabels: { "client.clusterlink.net/namespace": "app" } },
};

const review = (kind: string, spec: unknown, operation: "CREATE" | "UPDATE" = "CREATE"): Verdict =>
  planAdmission(
    requestOf({
      operation,
      kind,
      group: GROUP,
      object: objectOf("x", {}, spec),
      ...(operation === "UPDATE" ? { oldObject: objectOf("x", {}, { changed: "before" }) } : {}),
    }),
    EMPTY_SNAPSHOT,
  );

describe("clusterlink-spec", () => {
  it.each<[string, string, unknown]>([
    ["a Peer with a gateway", "Peer", { gateways: [{ host: "gw.east", port: 443 }] }],
    ["an Import with a source", "Import", { port: 5432, sources: [source] }],
    [
      "an Import asking for a port in the lease range",
      "Import",
      { port: 80, targetPort: 30000, sources: [source] },
    ],
    ["an Export of a port", "Export", { port: 5432 }],
    ["an Export without a port (single-port Service)", "Export", {}],
    [
      "an AccessPolicy with selectors",
      "AccessPolicy",
      { action: "allow", from: [selector], to: [selector] },
    ],
  ])("admits %s", (_title, kind, spec) => {
    expect(review(kind, spec)).toMatchObject({ allowed: true });
  });

  it.each<[string, string, unknown, RegExp]>([
    ["a Peer without gateways", "Peer", { gateways: [] }, /spec\.gateways is empty/],
    ["an Import without sources", "Import", { port: 5432, sources: [] }, /spec\.sources is empty/],
    [
      "an Import on port 0",
      "Import",
      { port: 0, sources: [source] },
      /spec\.port 0 is not in 1-65535/,
    ],
    [
      "an Import asking for a port outside the lease range",
      "Import",
      { port: 80, targetPort: 80, sources: [source] },
      /spec\.targetPort 80 is not 0 and not in \[1024, 49152\)/,
    ],
    ["an Export on port 70000", "Export", { port: 70000 }, /spec\.port/],
    [
      "an AccessPolicy item with both workloadSets and workloadSelector",
      "AccessPolicy",
      { action: "deny", from: [{ ...selector, workloadSets: ["a"] }], to: [selector] },
      /spec\.from\[0\] must set exactly one of workloadSets and workloadSelector/,
    ],
    [
      "a PrivilegedAccessPolicy item with neither",
      "PrivilegedAccessPolicy",
      { action: "deny", from: [selector], to: [{}] },
      /spec\.to\[0\] must set exactly one/,
    ],
    [
      "an AccessPolicy with an unknown action",
      "AccessPolicy",
      { action: "maybe", from: [], to: [] },
      /spec\.action/,
    ],
  ])("refuses %s, saying what to fix", (_title, kind, spec, reason) => {
    const verdict = review(kind, spec);
    expect(verdict).toMatchObject({ allowed: false, policy: "clusterlink-spec", code: 422 });
    if (verdict.allowed) return;
    expect(verdict.reason).toMatch(reason);
    expect(denialMessage(verdict)).toMatch(/To fix: .+\.$/);
  });

  it.each(["my.db", "1db"])(
    "refuses an Import named %s: its Services could not be named, say what to name it",
    (name) => {
      const verdict = planAdmission(
        requestOf({
          operation: "CREATE",
          kind: "Import",
          group: GROUP,
          object: objectOf(name, {}, { port: 5432, sources: [source] }),
        }),
        EMPTY_SNAPSHOT,
      );
      expect(verdict).toMatchObject({ allowed: false, policy: "clusterlink-spec", code: 422 });
      if (verdict.allowed) return;
      expect(verdict.reason).toMatch(/metadata\.name: .*DNS-1035.*recreate it as '/);
    },
  );

  it("never refuses an update for the name (names never change; one stored before is served)", () => {
    const spec = { port: 5432, sources: [source] };
    const verdict = planAdmission(
      requestOf({
        operation: "UPDATE",
        kind: "Import",
        group: GROUP,
        object: objectOf("my.db", {}, { ...spec, port: 5433 }),
        oldObject: objectOf("my.db", {}, spec),
      }),
      EMPTY_SNAPSHOT,
    );
    expect(verdict.allowed).toBe(true);
  });

  it("does not block an update that leaves the spec as it is (a controller's status or label write)", () => {
    const spec = { port: 5432, sources: [] };
    const verdict = planAdmission(
      requestOf({
        operation: "UPDATE",
        kind: "Import",
        group: GROUP,
        object: objectOf("x", { touched: "yes" }, spec),
        oldObject: objectOf("x", {}, spec),
      }),
      EMPTY_SNAPSHOT,
    );
    expect(verdict.allowed).toBe(true);
  });
});
