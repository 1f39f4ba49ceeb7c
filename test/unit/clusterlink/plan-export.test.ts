// An Export is valid against its Service as upstream decides (host, or the Service exists), and
// beyond upstream the port is checked: given, it must be one of the Service's; omitted, the
// Service must have exactly one.
import { observeExport } from "../../../shared/clusterlink/observed.js";
import { planExport } from "../../../shared/clusterlink/plan-export.js";
import type { Service } from "../../../shared/core/objects.js";

const exportOf = (spec: Record<string, unknown>) =>
  observeExport({
    apiVersion: "clusterlink.net/v1alpha1",
    kind: "Export",
    metadata: { name: "db", namespace: "data", generation: 1 },
    spec,
  });

const serviceWith = (...ports: number[]): Service => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "db", namespace: "data" },
  spec: { ports: ports.map((port) => ({ port })) },
});

const conditionOf = (plan: ReturnType<typeof planExport>, type: string) =>
  plan.conditions.find((c) => c.type === type);

describe("planExport", () => {
  interface Row {
    readonly title: string;
    readonly spec: Record<string, unknown>;
    readonly service: Service | undefined;
    readonly want: { status: string; reason: string; message: string };
  }
  const VERIFIED = { status: "True", reason: "Verified", message: "" };
  const error = (message: string) => ({ status: "False", reason: "Error", message });
  it.each<Row>([
    {
      title: "host set: valid without a Service",
      spec: { host: "db.example.com", port: 5432 },
      service: undefined,
      want: VERIFIED,
    },
    {
      title: "port given and on the Service",
      spec: { port: 5432 },
      service: serviceWith(5432, 8080),
      want: VERIFIED,
    },
    {
      title: "port omitted, single-port Service",
      spec: {},
      service: serviceWith(5432),
      want: VERIFIED,
    },
    {
      title: "no Service: upstream's exact message",
      spec: { port: 5432 },
      service: undefined,
      want: error("export service 'data/db' does not exist"),
    },
    {
      title: "port the Service lacks (upstream said Verified)",
      spec: { port: 9999 },
      service: serviceWith(5432, 8080),
      want: error("export service 'data/db' has no port 9999 (its ports: 5432, 8080)"),
    },
    {
      title: "port omitted, multi-port Service: the ports are listed",
      spec: {},
      service: serviceWith(5432, 8080),
      want: error("export service 'data/db' has ports 5432, 8080: set spec.port to one of them"),
    },
  ])("$title -> ExportValid $want.status $want.reason", ({ spec, service, want }) => {
    const plan = planExport(exportOf(spec), service);
    expect(conditionOf(plan, "ExportValid")).toEqual({ type: "ExportValid", ...want });
    expect(conditionOf(plan, "Ready")?.status).toBe(want.status);
    expect(conditionOf(plan, "Stalled")?.status).toBe(want.status === "True" ? "False" : "True");
    expect(conditionOf(plan, "Reconciling")?.status).toBe("False");
  });

  it("a single-port Service's port is the effective port", () => {
    const plan = planExport(exportOf({}), serviceWith(5432));
    expect(plan.verdict).toMatchObject({ kind: "valid", port: 5432 });
  });

  it("a malformed spec is Stalled with the field named", () => {
    const plan = planExport(exportOf({ port: "x" }), serviceWith(5432));
    expect(plan.verdict).toMatchObject({ kind: "invalid", reason: "InvalidSpec" });
    expect(conditionOf(plan, "Stalled")?.message).toMatch(/^spec\.port: /);
  });
});
