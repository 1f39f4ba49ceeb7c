/**
 * Pure: what an Import's sources are worth now, from the Peers they name (read live on every
 * event; the Peers' PeerReachable is clusterlink-peer-health's). The seed lists "one or more of
 * the Sources are invalid or unreachable" among an Import's errors; upstream reports nothing.
 *
 * A source is usable unless its Peer is missing from the ClusterLink namespace or says
 * PeerReachable False. A Peer not heartbeaten yet (no PeerReachable) is not known to be down:
 * usable, and the condition says Unknown until it is. The Import stays Ready while one source
 * is usable, because the dataplane fails over among the sources; with none it is not Ready.
 */
import type { ImportSpec } from "../kinds/clusterlink.js";
import type { WantedCondition } from "./plan-status.js";

/** Our own condition type (upstream has none for this). */
export const SOURCES_CONDITION = "ImportSourcesReachable";

/** A Peer as an Import's plan needs it: whether it is there, and its PeerReachable. */
export type PeerReading =
  | { readonly found: false }
  | {
      readonly found: true;
      /** PeerReachable's status; undefined while the Peer has none. */
      readonly reachable: boolean | undefined;
      /** PeerReachable's message (why it is down). */
      readonly message: string;
    };

export interface SourcesPlan {
  readonly condition: WantedCondition;
  /** Sources whose Peer is not known to be down. */
  readonly usable: number;
  readonly total: number;
  /** The unusable ones, each as `<peer>/<exportNamespace>/<exportName>` and why. */
  readonly unusable: readonly UnusableSource[];
}

export interface UnusableSource {
  readonly source: string;
  /** `<source>: <why>`, as the condition's message lists it. */
  readonly problem: string;
}

type Source = NonNullable<ImportSpec["sources"]>[number];

export const sourceName = (s: Source): string => `${s.peer}/${s.exportNamespace}/${s.exportName}`;
const nameOf = sourceName;

/** What the message lists before the problems; each problem starts `<source>: `. */
const UNUSABLE_LEAD = "sources unusable: ";
const PROBLEM_SEPARATOR = "; ";

function problemOf(source: Source, peer: PeerReading | undefined, clNamespace: string): string {
  if (peer === undefined || !peer.found) {
    return `${nameOf(source)}: no Peer '${source.peer}' in ${clNamespace}`;
  }
  const why = peer.message === "" ? "" : ` (${peer.message})`;
  return `${nameOf(source)}: Peer '${source.peer}' unreachable${why}`;
}

/** `peers` by name, as read from the ClusterLink namespace (a missing name: no such Peer). */
export function planSources(
  sources: readonly Source[],
  peers: ReadonlyMap<string, PeerReading>,
  clNamespace: string,
): SourcesPlan {
  const total = sources.length;
  if (total === 0) {
    const message = "the Import names no source";
    return {
      condition: { type: SOURCES_CONDITION, status: "False", reason: "NoSources", message },
      usable: 0,
      total,
      unusable: [],
    };
  }
  const down = sources.filter((s) => {
    const peer = peers.get(s.peer);
    return peer === undefined || !peer.found || peer.reachable === false;
  });
  const pending = sources.filter((s) => {
    const peer = peers.get(s.peer);
    return peer?.found === true && peer.reachable === undefined;
  });
  const usable = total - down.length;
  if (down.length > 0) {
    const unusable = down.map((s) => ({
      source: nameOf(s),
      problem: problemOf(s, peers.get(s.peer), clNamespace),
    }));
    const problems = unusable.map((u) => u.problem).join(PROBLEM_SEPARATOR);
    const message = `${down.length} of ${total} ${UNUSABLE_LEAD}${problems}`;
    return {
      condition: { type: SOURCES_CONDITION, status: "False", reason: "Unreachable", message },
      usable,
      total,
      unusable,
    };
  }
  if (pending.length > 0) {
    const names = peersNamedBy(pending).map((name) => `Peer '${name}'`);
    const message = `not heartbeaten yet: ${names.join(", ")}`;
    return {
      condition: { type: SOURCES_CONDITION, status: "Unknown", reason: "Pending", message },
      usable,
      total,
      unusable: [],
    };
  }
  return {
    condition: { type: SOURCES_CONDITION, status: "True", reason: "Reachable", message: "" },
    usable,
    total,
    unusable: [],
  };
}

/**
 * The sources a stored ImportSourcesReachable listed as unusable (the status is the function's
 * only memory): `<source>: ` at the start of a problem. A Peer's message inside a problem may
 * hold "; " too, so only the Import's own source names are looked for.
 */
export function listedUnusable(
  stored:
    { readonly status: string; readonly reason: string; readonly message: string } | undefined,
  sources: readonly Source[],
): Set<string> {
  if (stored?.status !== "False" || stored.reason !== "Unreachable") return new Set();
  const lead = stored.message.indexOf(UNUSABLE_LEAD);
  if (lead < 0) return new Set();
  const problems = stored.message.slice(lead + UNUSABLE_LEAD.length);
  return new Set(
    sources
      .map(nameOf)
      .filter(
        (name) =>
          problems.startsWith(`${name}: `) || problems.includes(`${PROBLEM_SEPARATOR}${name}: `),
      ),
  );
}

/** The distinct Peer names an Import's sources name. */
export const peersNamedBy = (sources: readonly Source[] | undefined): string[] => [
  ...new Set((sources ?? []).map((s) => s.peer)),
];
