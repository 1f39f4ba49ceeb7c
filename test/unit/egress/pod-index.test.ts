import {
  compileAppliedTo,
  isEgressMember,
  type AppliedTo,
  type CompiledAppliedTo,
  type PodSnapshot,
} from "../../../shared/egress/membership.js";
import { PodIndex } from "../../../shared/egress/pod-index.js";
import { namespaces, pod } from "./fixtures.js";

const cluster = namespaces({ a: { team: "x" }, b: { team: "y" }, c: {} });
const pods: PodSnapshot[] = [];
for (const ns of ["a", "b", "c", "ghost"]) {
  for (const app of ["web", "db", ""]) {
    pods.push(
      pod(
        ns,
        `${app || "none"}-1`,
        app === "" ? {} : { app, tier: app === "web" ? "front" : "back" },
      ),
    );
  }
}

function compiled(appliedTo: AppliedTo): CompiledAppliedTo {
  const result = compileAppliedTo(appliedTo);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.appliedTo;
}

const key = (p: PodSnapshot): string => `${p.namespace}/${p.name}`;

describe("PodIndex candidates: a narrow superset of the members", () => {
  it.each<[string, AppliedTo, number]>([
    ["appliedTo: {} -> no candidates", {}, 0],
    ["podSelector {} -> every Pod", { podSelector: {} }, 12],
    [
      "matchLabels app=web -> the app=web Pods only",
      { podSelector: { matchLabels: { app: "web" } } },
      4,
    ],
    [
      "In (web, db) -> Pods with either value",
      {
        podSelector: { matchExpressions: [{ key: "app", operator: "In", values: ["web", "db"] }] },
      },
      8,
    ],
    [
      "NotIn alone cannot narrow -> every Pod",
      { podSelector: { matchExpressions: [{ key: "app", operator: "NotIn", values: ["web"] }] } },
      12,
    ],
    [
      "namespaceSelector team=x -> the Pods of a",
      { namespaceSelector: { matchLabels: { team: "x" } } },
      3,
    ],
    ["namespaceSelector {} -> every Pod, unknown Namespaces too", { namespaceSelector: {} }, 12],
    [
      "both -> the narrower of the two lists",
      {
        podSelector: { matchLabels: { app: "web", tier: "front" } },
        namespaceSelector: { matchLabels: { team: "x" } },
      },
      3,
    ],
  ])("%s (%i)", (_title, appliedTo, count) => {
    const c = compiled(appliedTo);
    const candidates = new PodIndex(pods).candidates(c, cluster);
    expect(candidates).toHaveLength(count);
    const members = pods.filter((p) => isEgressMember(c, p, cluster)).map(key);
    expect(candidates.map(key)).toEqual(expect.arrayContaining(members));
  });

  it("keeps one Pod per namespace/name, the later duplicate winning", () => {
    const index = new PodIndex([pod("a", "p", { v: "1" }), pod("a", "p", { v: "2" })]);
    expect(index.pods).toEqual([pod("a", "p", { v: "2" })]);
  });
});
