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
import type { ImportSpec } from "../rules/clusterlink-kinds.js";
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
}

type Source = NonNullable<ImportSpec["sources"]>[number];

const nameOf = (s: Source): string => `${s.peer}/${s.exportNamespace}/${s.exportName}`;

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
    const problems = down.map((s) => problemOf(s, peers.get(s.peer), clNamespace));
    const message = `${down.length} of ${total} sources unusable: ${problems.join("; ")}`;
    return {
      condition: { type: SOURCES_CONDITION, status: "False", reason: "Unreachable", message },
      usable,
      total,
    };
  }
  if (pending.length > 0) {
    const names = peersNamedBy(pending).map((name) => `Peer '${name}'`);
    const message = `not heartbeaten yet: ${names.join(", ")}`;
    return {
      condition: { type: SOURCES_CONDITION, status: "Unknown", reason: "Pending", message },
      usable,
      total,
    };
  }
  return {
    condition: { type: SOURCES_CONDITION, status: "True", reason: "Reachable", message: "" },
    usable,
    total,
  };
}

/** The distinct Peer names an Import's sources name. */
export const peersNamedBy = (sources: readonly Source[] | undefined): string[] => [
  ...new Set((sources ?? []).map((s) => s.peer)),
];
