/**
 * The rule versions this process's own status writes produced, for rules they left in sync. An
 * update event for exactly that version is the echo of our write (upstream filters these with a
 * generation predicate): nothing about the rule changed since it was applied, so the event skips
 * the CNF reads. Drift on the CNF is the resync's job. Only update events qualify (our write's
 * echo is one), and each write is skipped once. Per process and safe to lose: a lost entry costs
 * one full check, and any change to the rule (spec, labels, deletion) changes its version.
 */

const MAX_ENTRIES = 20_000;

export class OwnStatusWrites {
  private readonly versions = new Map<string, string>();

  /** Our status write left the rule `uid` in sync at `resourceVersion`. */
  record(uid: string | undefined, resourceVersion: string | undefined): void {
    if (uid === undefined || resourceVersion === undefined) return;
    this.versions.delete(uid);
    if (this.versions.size >= MAX_ENTRIES) {
      const oldest = this.versions.keys().next().value;
      if (oldest !== undefined) this.versions.delete(oldest);
    }
    this.versions.set(uid, resourceVersion);
  }

  /**
   * Whether the rule as read is exactly what our last in-sync status write left. True once per
   * write: a write has one echo, and a later delivery of that version (a duplicate, a re-list) is
   * checked in full.
   */
  takeEcho(uid: string | undefined, resourceVersion: string | undefined): boolean {
    if (uid === undefined || resourceVersion === undefined) return false;
    if (this.versions.get(uid) !== resourceVersion) return false;
    this.versions.delete(uid);
    return true;
  }

  /** Forgets everything, as a new process would (tests that simulate a controller restart). */
  clear(): void {
    this.versions.clear();
  }
}

export const processOwnStatusWrites = new OwnStatusWrites();
