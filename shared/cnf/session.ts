/**
 * sysauth cookies per CNF endpoint and user, kept per process and safe to lose (a lost cookie
 * costs one login). Concurrent callers that need a login share one.
 */

import { SingleFlight } from "../core/single-flight.js";

export class CnfSessionCache {
  private readonly tokens = new Map<string, string>();
  private readonly logins = new SingleFlight<string>();

  static key(baseUrl: string, username: string): string {
    return `${baseUrl}#${username}`;
  }

  token(key: string): string | undefined {
    return this.tokens.get(key);
  }

  /** A cached token, or the result of `login()`, shared with every concurrent caller. */
  async obtain(key: string, login: () => Promise<string>): Promise<string> {
    const cached = this.tokens.get(key);
    if (cached !== undefined) return cached;
    return this.logins.run(key, async () => {
      const token = await login();
      this.tokens.set(key, token);
      return token;
    });
  }

  /** Drops `token` if it is still the cached one (another caller may have logged in since). */
  forget(key: string, token: string): void {
    if (this.tokens.get(key) === token) this.tokens.delete(key);
  }

  clear(): void {
    this.tokens.clear();
  }

  get size(): number {
    return this.tokens.size;
  }
}

/** The process-wide cache the client uses unless given another (tests pass their own). */
export const processCnfSessions = new CnfSessionCache();
