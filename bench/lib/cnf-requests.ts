/**
 * What the bench's CNF simulators were asked: each request described as "PUT mwan3/rules/<name>"
 * and tallied, to explain a row's numbers.
 */
import type { CnfPod } from "../../dev/world/index.js";

/** "GET mwan3/rules/<name>", "PUT restart/mwan3", "POST login" for one simulator request. */
export function describeCnfRequest(method: string, path: string): string {
  const segments = path.split("/").filter((s) => s !== "" && s !== "cgi-bin" && s !== "luci");
  if (segments.length === 0) return `${method} login`;
  const [area, second, , collection, item] = segments;
  if (area === "sdewan" && second === "v1") return `${method} restart/${segments[3] ?? ""}`;
  return `${method} ${second ?? "?"}/${collection ?? "?"}${item === undefined ? "" : "/<name>"}`;
}

/** Counts of described requests each simulator handled after sequence number `after[i]`. */
export function cnfRequestTally(
  pods: readonly CnfPod[],
  after: readonly number[] = [],
): Map<string, number> {
  const tally = new Map<string, number>();
  pods.forEach((pod, i) => {
    for (const record of pod.sim.requests()) {
      if (record.seq <= (after[i] ?? 0)) continue;
      const key = describeCnfRequest(record.method, record.path);
      tally.set(key, (tally.get(key) ?? 0) + 1);
    }
  });
  return tally;
}

/** The last request sequence number of each pod's simulator, to tally what comes next. */
export function lastSeqs(pods: readonly CnfPod[]): number[] {
  return pods.map((pod) => pod.sim.requests().at(-1)?.seq ?? 0);
}

/** "GET mwan3/rules/<name> 1, PUT restart/mwan3 1" with counts divided by `per`. */
export function describeTally(tally: ReadonlyMap<string, number>, per = 1): string {
  return [...tally]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, n]) => `${key} ${Number((n / per).toFixed(2))}`)
    .join(", ");
}
