/**
 * Read-backs (ADR 0003) of lone rules, shared between deliveries: a read-back joins the read of
 * its group (kind and namespace) that begins `delayMs` after the first asked, so one LIST answers
 * every delivery of a burst that wrote meanwhile (ADR 0021). Each read still begins after every
 * write it answers for, as the delivery's own read would. Per process; nothing kept after.
 */

interface Batch<V> {
  readonly names: Set<string>;
  result: Promise<ReadonlyMap<string, V>> | undefined;
}

export class SharedReadBacks<V> {
  private readonly pending = new Map<string, Batch<V>>();

  /**
   * `name`'s value from the group's next read (`run`, given every name that joined it), or
   * undefined when the read did not find it.
   */
  async read(
    group: string,
    name: string,
    delayMs: number,
    run: (names: readonly string[]) => Promise<ReadonlyMap<string, V>>,
  ): Promise<V | undefined> {
    let batch = this.pending.get(group);
    if (batch === undefined) {
      const fresh: Batch<V> = { names: new Set(), result: undefined };
      fresh.result = new Promise((ok) => setTimeout(ok, delayMs)).then(() => {
        // Begun: later read-backs start the next read.
        if (this.pending.get(group) === fresh) this.pending.delete(group);
        return run([...fresh.names]);
      });
      this.pending.set(group, fresh);
      batch = fresh;
    }
    batch.names.add(name);
    return (await batch.result)?.get(name);
  }
}
