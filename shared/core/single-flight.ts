/**
 * One call per key at a time: callers that ask for a key whose call is still running share its
 * promise, and the key is free again as soon as that call settles (nothing is cached). For reads
 * that arrive together (a burst of admission reviews) and logins shared by concurrent requests.
 */
export class SingleFlight<T> {
  private readonly running = new Map<string, Promise<T>>();

  run(key: string, call: () => Promise<T>): Promise<T> {
    const pending = this.running.get(key);
    if (pending !== undefined) return pending;
    const started = call().finally(() => this.running.delete(key));
    this.running.set(key, started);
    return started;
  }
}
