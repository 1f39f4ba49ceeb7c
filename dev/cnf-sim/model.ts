/**
 * One simulated CNF's state: its UCI configuration, its CNFService table and its LuCI sessions.
 * A CNF restart replaces the whole model, exactly as a pod restart loses everything not in the
 * image.
 */
import { randomBytes } from "node:crypto";
import type { SimCollection } from "./collection.js";
import { uciCollections } from "./kinds.js";
import { cnfServiceCollection, type ServiceResolver } from "./services.js";
import { bootWorld } from "./uci.js";

export interface CnfModelOptions {
  readonly interfaces: readonly string[];
  readonly resolveService: ServiceResolver;
  /** LuCI drops a session after this much idle time. */
  readonly sessionIdleMs: number;
}

export class CnfModel {
  readonly collections: ReadonlyMap<string, SimCollection>;
  private readonly sessions = new Map<string, number>();

  constructor(private readonly options: CnfModelOptions) {
    const all = [
      ...uciCollections(bootWorld(options.interfaces)),
      cnfServiceCollection(options.resolveService),
    ];
    this.collections = new Map(all.map((c) => [`${c.module}/${c.collection}`, c]));
  }

  collection(module: string, collection: string): SimCollection | undefined {
    return this.collections.get(`${module}/${collection}`);
  }

  /** Every object, keyed like the counters ("mwan3/policies"), as collection GETs return them. */
  state(): Record<string, Record<string, unknown>[]> {
    return Object.fromEntries([...this.collections].map(([key, c]) => [key, c.list()]));
  }

  openSession(now: number): string {
    const token = randomBytes(16).toString("hex");
    this.sessions.set(token, now);
    return token;
  }

  /** True when the token names a live session; using a session keeps it alive. */
  touchSession(token: string | undefined, now: number): boolean {
    if (token === undefined) return false;
    const lastUsed = this.sessions.get(token);
    if (lastUsed === undefined) return false;
    if (now - lastUsed > this.options.sessionIdleMs) {
      this.sessions.delete(token);
      return false;
    }
    this.sessions.set(token, now);
    return true;
  }

  closeSession(token: string | undefined): void {
    if (token !== undefined) this.sessions.delete(token);
  }

  expireSessions(): void {
    this.sessions.clear();
  }

  get sessionCount(): number {
    return this.sessions.size;
  }
}
