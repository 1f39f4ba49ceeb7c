// The pure plan of a merge Import's EndpointSlice copies: names, labels, the port, and which
// copies are written, left or deleted.
import { copyName, planCopies, removeCopies } from "../../../shared/clusterlink/plan-merge.js";
import type { KubeObject, Service } from "../../../shared/core/objects.js";

const key = { namespace: "app", name: "db" };
const slice = (name: string, ips: string[], namespace = "clusterlink-system"): KubeObject => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: { name, namespace },
  endpoints: ips.map((ip) => ({ addresses: [ip] })),
});
const userService = (ports: { name?: string; port: number }[]): Service => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "db", namespace: "app" },
  spec: { ports },
});

it("copy names are upstream's: clusterlink-<length of the Import name>-<Import>-<slice>", () => {
  expect(copyName("db", "dp-1")).toBe("clusterlink-2-db-dp-1");
});

it("one copy per dataplane slice, the port named like the user's Service port that is spec.port", () => {
  const plan = planCopies({
    key,
    port: 5432,
    targetPort: 31000,
    userService: userService([
      { name: "metrics", port: 9187 },
      { name: "sql", port: 5432 },
    ]),
    found: { dataplane: [slice("dp-1", ["192.0.2.1"])], copies: [] },
  });
  expect(plan.copies).toBe(1);
  expect(plan.writes).toEqual([
    {
      action: "create",
      slice: {
        namespace: "app",
        name: "clusterlink-2-db-dp-1",
        labels: {
          "kubernetes.io/service-name": "db",
          "endpointslice.kubernetes.io/managed-by": "clusterlink.net",
          "clusterlink.net/dataplane-endpointslice-name": "dp-1",
        },
        addressType: "IPv4",
        endpoints: [{ addresses: ["192.0.2.1"] }],
        ports: [{ name: "sql", port: 31000, protocol: "TCP" }],
      },
    },
  ]);
});

it("an unnamed Service port gives an unnamed copy port (upstream's only case)", () => {
  const plan = planCopies({
    key,
    port: 5432,
    targetPort: 31000,
    userService: userService([{ port: 5432 }]),
    found: { dataplane: [slice("dp-1", ["192.0.2.1"])], copies: [] },
  });
  const write = plan.writes[0];
  expect(write?.action === "create" ? write.slice.ports : null).toEqual([
    { port: 31000, protocol: "TCP" },
  ]);
});

it("a copy as wanted is left, a changed one updated, one of a slice that is gone deleted", () => {
  const base = { key, port: 5432, targetPort: 31000, userService: userService([{ port: 5432 }]) };
  const first = planCopies({
    ...base,
    found: { dataplane: [slice("dp-1", ["192.0.2.1"]), slice("dp-2", ["192.0.2.2"])], copies: [] },
  });
  const asStored = first.writes.map((w) => {
    if (w.action === "delete") throw new Error("no delete expected");
    const { namespace, name, labels, ...rest } = w.slice;
    return {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { namespace, name, labels },
      ...rest,
    };
  });
  const next = planCopies({
    ...base,
    found: { dataplane: [slice("dp-1", ["192.0.2.9"])], copies: asStored },
  });
  expect(
    next.writes.map((w) => [w.action, w.action === "delete" ? w.ref.name : w.slice.name]),
  ).toEqual([
    ["update", "clusterlink-2-db-dp-1"],
    ["delete", "clusterlink-2-db-dp-2"],
  ]);
  const same = planCopies({
    ...base,
    found: {
      dataplane: [slice("dp-1", ["192.0.2.1"]), slice("dp-2", ["192.0.2.2"])],
      copies: asStored,
    },
  });
  expect(same.writes).toEqual([]);
  expect(removeCopies({ dataplane: [], copies: asStored }).map((w) => w.action)).toEqual([
    "delete",
    "delete",
  ]);
});
