// An Import's Services as upstream builds them (reference B.3), never overwriting a Service that
// is not ours, and leaving nothing behind when the Import cannot be served.
import { createHash } from "node:crypto";
import { importLabels, systemServiceName } from "../../../shared/clusterlink/names.js";
import { observeImport } from "../../../shared/clusterlink/observed.js";
import { planImport, type ImportPlan } from "../../../shared/clusterlink/plan-import.js";
import type { LeaseDecision } from "../../../shared/clusterlink/plan-lease.js";
import type { PeerReading } from "../../../shared/clusterlink/plan-sources.js";
import type { Service } from "../../../shared/core/objects.js";
import { dns1035LabelProblem } from "../../../shared/core/labels.js";
import { importNameProblem } from "../../../shared/kinds/clusterlink.js";

const CL = "clusterlink-system";
const md5 = (s: string): string => createHash("md5").update(s).digest("hex");
const imp = (namespace = "app", name = "db", labels: Record<string, string> = {}) =>
  observeImport({
    apiVersion: "clusterlink.net/v1alpha1",
    kind: "Import",
    metadata: { name, namespace, generation: 2, labels },
    spec: {
      port: 5432,
      targetPort: 30000,
      sources: [{ peer: "east", exportName: "db", exportNamespace: "data" }],
      lbScheme: "round-robin",
    },
  });
/** The one source's Peer, heartbeaten and reachable. */
const EAST_UP: ReadonlyMap<string, PeerReading> = new Map([
  ["east", { found: true, reachable: true, message: "" }],
]);
const HELD: LeaseDecision = { kind: "held", port: 30000 };
const svc = (namespace: string, name: string, labels: Record<string, string> = {}): Service => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace, labels, resourceVersion: "41" },
  spec: { type: "ClusterIP", ports: [{ port: 80 }] },
});
const cond = (plan: ImportPlan, type: string) => plan.conditions.find((c) => c.type === type);

describe("system Service name (reference B.3)", () => {
  it("is import-<name[:10]>-<ns[:10]>-<md5(ns/name)>", () => {
    expect(systemServiceName({ namespace: "app", name: "db" }, CL)).toBe(
      `import-db-app-${md5("app/db")}`,
    );
    const long = { namespace: "namespace-long", name: "a-very-long-import-name" };
    expect(systemServiceName(long, CL)).toBe(
      `import-a-very-lon-namespace--${md5("namespace-long/a-very-long-import-name")}`,
    );
  });

  it("is the Import's own name inside the ClusterLink namespace", () => {
    expect(systemServiceName({ namespace: CL, name: "db" }, CL)).toBe("db");
  });
});

describe("planImport", () => {
  it("a new Import: both Services created, labelled, ExternalName pointing at the system one", () => {
    const plan = planImport({
      imp: imp(),
      decision: HELD,
      found: { system: undefined, user: undefined },
      clNamespace: CL,
      peers: EAST_UP,
    });
    const system = `import-db-app-${md5("app/db")}`;
    expect(plan.writes).toEqual([
      {
        action: "create",
        service: {
          namespace: CL,
          name: system,
          labels: importLabels({ namespace: "app", name: "db" }),
          spec: {
            type: "ClusterIP",
            selector: { app: "cl-dataplane" },
            ports: [{ port: 5432, targetPort: 30000, protocol: "TCP" }],
          },
        },
      },
      {
        action: "create",
        service: {
          namespace: "app",
          name: "db",
          labels: importLabels({ namespace: "app", name: "db" }),
          spec: { type: "ExternalName", externalName: `${system}.${CL}.svc.cluster.local` },
        },
      },
    ]);
    expect(cond(plan, "ImportTargetPortValid")).toMatchObject({
      status: "True",
      reason: "Leased",
      message: "",
    });
    expect(cond(plan, "ImportServiceValid")).toMatchObject({
      status: "True",
      reason: "Valid",
      message: "",
    });
  });

  it("an Import in the ClusterLink namespace gets only the system Service, named like it", () => {
    const plan = planImport({
      imp: imp(CL),
      decision: HELD,
      found: { system: undefined, user: undefined },
      clNamespace: CL,
      peers: EAST_UP,
    });
    expect(plan.writes.map((w) => (w.action === "delete" ? w.ref : w.service.name))).toEqual([
      "db",
    ]);
  });

  it("a user's Service with the name: never written, upstream's message, our system Service removed", () => {
    const key = { namespace: "app", name: "db" };
    const found = {
      system: svc(CL, systemServiceName(key, CL), importLabels(key)),
      user: svc("app", "db"),
    };
    const plan = planImport({ imp: imp(), decision: HELD, found, clNamespace: CL, peers: EAST_UP });
    // Deleted as read: the API server refuses it if the Service changed since (not ours then?).
    expect(plan.writes).toEqual([
      {
        action: "delete",
        ref: { namespace: CL, name: systemServiceName(key, CL) },
        resourceVersion: "41",
      },
    ]);
    expect(cond(plan, "ImportServiceValid")).toMatchObject({
      status: "False",
      reason: "Error",
      message: "service 'app/db' already exists and managed by ''",
    });
    expect(cond(plan, "Stalled")).toMatchObject({ status: "True", reason: "ServiceConflict" });
  });

  it("a requested port held by another: both conditions carry upstream's message, no Service", () => {
    const decision: LeaseDecision = { kind: "conflict", port: 27743, holder: "app/first" };
    const plan = planImport({
      imp: imp(),
      decision,
      found: { system: undefined, user: undefined },
      clNamespace: CL,
      peers: EAST_UP,
    });
    const message =
      "cannot generate listening port: port 27743 is already in use by service app/first";
    expect(plan.writes).toEqual([]);
    expect(cond(plan, "ImportTargetPortValid")).toMatchObject({
      status: "False",
      reason: "Error",
      message,
    });
    expect(cond(plan, "ImportServiceValid")).toMatchObject({
      status: "False",
      reason: "Error",
      message,
    });
  });

  it("Services already as wanted: no write", () => {
    const first = planImport({
      imp: imp(),
      decision: HELD,
      found: { system: undefined, user: undefined },
      clNamespace: CL,
      peers: EAST_UP,
    });
    const asFound = first.writes.map((w) => {
      if (w.action === "delete") throw new Error("unexpected delete");
      const { namespace, name, labels, spec } = w.service;
      return {
        apiVersion: "v1",
        kind: "Service",
        metadata: { namespace, name, labels },
        spec: { ...spec, ports: spec.ports?.map((p) => ({ ...p })) },
      };
    });
    const plan = planImport({
      imp: imp(),
      decision: HELD,
      found: { system: asFound[0], user: asFound[1] },
      clNamespace: CL,
      peers: EAST_UP,
    });
    expect(plan.writes).toEqual([]);
  });

  it("a Service of ours that differs is updated at the version read (a precondition, not a blind write)", () => {
    const key = { namespace: "app", name: "db" };
    const found = {
      system: svc(CL, systemServiceName(key, CL), importLabels(key)),
      user: svc("app", "db", importLabels(key)),
    };
    const plan = planImport({ imp: imp(), decision: HELD, found, clNamespace: CL, peers: EAST_UP });
    expect(
      plan.writes.map((w) => [w.action, "resourceVersion" in w ? w.resourceVersion : ""]),
    ).toEqual([
      ["update", "41"],
      ["update", "41"],
    ]);
  });
});

describe("an Import whose name no Service can take (stored with the webhook down)", () => {
  it.each([
    ["my.db", "app"],
    ["1db", "app"],
    ["my.db", CL],
  ])(
    "%s in %s: Stalled InvalidName saying what to fix, our Services removed, nothing created",
    (name, namespace) => {
      const key = { namespace, name };
      const ours = importLabels(key);
      const plan = planImport({
        imp: imp(namespace, name),
        decision: undefined,
        found: { system: svc(CL, systemServiceName(key, CL), ours), user: undefined },
        clNamespace: CL,
        peers: EAST_UP,
      });
      expect(plan.problem?.reason).toBe("InvalidName");
      expect(plan.problem?.message).toMatch(/cannot name its Services.*recreate it as '[a-z]/);
      // The delete carries the version read (a precondition), whatever it is.
      expect(plan.writes).toHaveLength(1);
      expect(plan.writes).toMatchObject([
        { action: "delete", ref: { namespace: CL, name: systemServiceName(key, CL) } },
      ]);
      for (const type of ["ImportTargetPortValid", "ImportServiceValid"]) {
        expect(cond(plan, type)).toMatchObject({ status: "False", reason: "InvalidName" });
      }
      expect(cond(plan, "Stalled")).toMatchObject({ status: "True", reason: "InvalidName" });
    },
  );

  it("the names checked are exactly those whose Services cannot be named (DNS-1035)", () => {
    const names = [
      "db",
      "my-db",
      "a",
      "a".repeat(63),
      "my.db",
      "1db",
      "db-",
      "a.b.c",
      "x".repeat(64),
    ];
    for (const name of names) {
      for (const namespace of ["app", CL]) {
        const key = { namespace, name };
        const derived = [systemServiceName(key, CL), ...(namespace === CL ? [] : [name])];
        expect([name, namespace, importNameProblem(name) === null]).toEqual([
          name,
          namespace,
          derived.every((d) => dns1035LabelProblem(d) === null),
        ]);
      }
    }
  });

  it("suggests a name that would do", () => {
    for (const name of ["my.db", "1db", "a..b", "db-", `${"x".repeat(70)}.y`]) {
      const suggested = /recreate it as '([^']*)'/.exec(importNameProblem(name) ?? "")?.[1];
      expect(dns1035LabelProblem(suggested ?? "")).toBeNull();
    }
  });
});
