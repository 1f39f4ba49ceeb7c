import { Prng } from "../../dev/fuzz/prng.js";

/**
 * The soak's seeded random source, so a workload can be replayed by its seed: the fuzz's
 * mulberry32 generator, with the soak's conventions (an integer below n, picking from an empty
 * list gives undefined).
 */
export class Random {
  private readonly prng: Prng;

  constructor(readonly seed: number) {
    this.prng = new Prng(seed);
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.prng.next();
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return this.prng.int(0, n - 1);
  }

  pick<T>(items: readonly T[]): T | undefined {
    return items.length === 0 ? undefined : this.prng.pick(items);
  }

  chance(p: number): boolean {
    return this.prng.chance(p);
  }
}
