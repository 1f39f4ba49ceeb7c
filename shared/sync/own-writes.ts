/**
 * The rule versions this process's own writes produced (a claim, an Applying mark, a status), so
 * the echo of our write is skipped, once, without a read. Recorded only when the write's answer
 * shows nothing but our write changed the rule; per process and safe to lose (a lost entry costs
 * one full check). Which versions qualify in Resource and Reference mode, and why:
 * docs/code-notes.md (sync/own-writes.ts).
 */
import type { ObjectMeta } from "../core/objects.js";

const MAX_RULES = 20_000;
/** A pass writes at most a claim, a mark, a status and a correction. */
const MAX_VERSIONS_PER_RULE = 4;

/** What must be unchanged between our read and our write's answer for the echo to be skipped. */
export function echoBasisOf(meta: ObjectMeta): string {
  const sorted = (map: Readonly<Record<string, string>> | undefined) =>
    Object.entries(map ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([
    meta.uid ?? "",
    meta.generation ?? 0,
    meta.deletionTimestamp ?? "",
    sorted(meta.labels),
    sorted(meta.annotations),
  ]);
}

interface OwnVersion {
  readonly version: string;
  /** A status write that left the rule in sync. */
  readonly inSync: boolean;
  /** The delivery that wrote it answered done or permanent for the rule. */
  readonly finished: boolean;
}

/** How the event names its version (see above). */
export type EchoEvidence = "carried" | "read";

export class OwnWrites {
  private readonly versions = new Map<string, OwnVersion[]>();

  /**
   * Our write answered `written`; the rule had read as `readBasis` (echoBasisOf) when we decided
   * to write. Recorded only when nothing else changed in between.
   */
  recordWrite(readBasis: string, written: ObjectMeta, inSync = false): void {
    const { uid, resourceVersion } = written;
    if (uid === undefined || resourceVersion === undefined) return;
    if (echoBasisOf(written) !== readBasis) return;
    const known = this.versions.get(uid) ?? [];
    this.versions.delete(uid);
    if (this.versions.size >= MAX_RULES) {
      const oldest = this.versions.keys().next().value;
      if (oldest !== undefined) this.versions.delete(oldest);
    }
    const entry = { version: resourceVersion, inSync, finished: false };
    this.versions.set(uid, [...known, entry].slice(-MAX_VERSIONS_PER_RULE));
  }

  /** The delivery that wrote them finished for rule `uid` (done or permanent, not retry). */
  finish(uid: string | undefined): void {
    const known = uid === undefined ? undefined : this.versions.get(uid);
    if (uid === undefined || known === undefined) return;
    this.versions.set(
      uid,
      known.map((v) => ({ ...v, finished: true })),
    );
  }

  /**
   * Whether `resourceVersion` of rule `uid` is the echo of our own write that may be skipped on
   * this `evidence` (see above); true once per write.
   */
  takeEcho(
    uid: string | undefined,
    resourceVersion: string | undefined,
    evidence: EchoEvidence,
  ): boolean {
    if (uid === undefined || resourceVersion === undefined) return false;
    const known = this.versions.get(uid) ?? [];
    const match = known.find((v) => v.version === resourceVersion);
    const skippable = evidence === "carried" ? match?.inSync || match?.finished : match?.inSync;
    if (match === undefined || skippable !== true) return false;
    const rest = known.filter((v) => v !== match);
    if (rest.length === 0) this.versions.delete(uid);
    else this.versions.set(uid, rest);
    return true;
  }

  /** Forgets everything, as a new process would (tests that simulate a controller restart). */
  clear(): void {
    this.versions.clear();
  }
}

export const processOwnWrites = new OwnWrites();
