/**
 * A KubeClient that notes every operation a function asks for ("list Pod", "patch status
 * Mwan3Rule"), so a bench row can say which requests make up its time. It delegates everything;
 * a finalizer change may cost more than one HTTP request (the function's own `calls.api` counts
 * those).
 */
import type {
  DeleteOptions,
  FinalizerResult,
  GetOptions,
  KnownFinalizers,
  KubeClient,
  KubeObject,
  ListOptions,
  ObjectInput,
  ObjectKey,
  ResourceType,
} from "../../shared/kube/index.js";
import type { CallCounters } from "../../shared/runtime/function.js";

interface Entry {
  n: number;
  ms: number;
}

interface Concurrency {
  now: number;
  max: number;
}

export class OperationTally {
  private readonly counts = new Map<string, Entry>();
  /** Requests of one operation ("patch-status") in flight together, over all kinds. */
  private readonly concurrency = new Map<string, Concurrency>();

  /** Runs `request`, counting it under "<operation> <Kind>" with its duration. */
  async note<T>(operation: string, type: ResourceType, request: () => Promise<T>): Promise<T> {
    const key = `${operation} ${type.kind}`;
    const entry = this.counts.get(key) ?? { n: 0, ms: 0 };
    this.counts.set(key, entry);
    const level = this.concurrency.get(operation) ?? { now: 0, max: 0 };
    this.concurrency.set(operation, level);
    entry.n += 1;
    level.now += 1;
    level.max = Math.max(level.max, level.now);
    const started = performance.now();
    try {
      return await request();
    } finally {
      entry.ms += performance.now() - started;
      level.now -= 1;
    }
  }

  reset(): void {
    this.counts.clear();
    for (const level of this.concurrency.values()) level.max = level.now;
  }

  total(): number {
    return [...this.counts.values()].reduce((a, b) => a + b.n, 0);
  }

  /**
   * "get Mwan3Rule 1 (mean 20 ms), list Pod 1 (...)" with counts divided by `per` (e.g. per
   * event); an operation over more than 4 kinds is summed ("patch-status 1000 (11 kinds, ...)").
   */
  describe(per = 1): string {
    const byOperation = new Map<string, [string, Entry][]>();
    for (const [key, entry] of this.counts) {
      const operation = key.split(" ")[0] ?? key;
      byOperation.set(operation, [...(byOperation.get(operation) ?? []), [key, entry]]);
    }
    const count = (n: number): string => String(Number((n / per).toFixed(2)));
    return [...byOperation]
      .sort(([a], [b]) => a.localeCompare(b))
      .flatMap(([operation, entries]) => {
        const n = entries.reduce((s, [, e]) => s + e.n, 0);
        const mean = entries.reduce((s, [, e]) => s + e.ms, 0) / n;
        const parallel = this.concurrency.get(operation)?.max ?? 1;
        const at = parallel > 1 ? `, up to ${parallel} at once` : "";
        if (entries.length > 4) {
          return [
            `${operation} ${count(n)} (${entries.length} kinds, mean ${mean.toFixed(0)} ms${at})`,
          ];
        }
        return entries
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([key, e]) => `${key} ${count(e.n)} (mean ${(e.ms / e.n).toFixed(0)} ms)`);
      })
      .join(", ");
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries([...this.counts].map(([key, e]) => [key, e.n]));
  }
}

export class RecordingKube implements KubeClient {
  constructor(
    private readonly inner: KubeClient,
    readonly tally: OperationTally = new OperationTally(),
  ) {}

  get<T extends KubeObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    options?: GetOptions,
  ): Promise<T | undefined> {
    return this.tally.note("get", type, () => this.inner.get(type, key, options));
  }

  list<T extends KubeObject>(type: ResourceType<T>, options?: ListOptions): Promise<T[]> {
    return this.tally.note("list", type, () => this.inner.list(type, options));
  }

  create<T extends KubeObject>(type: ResourceType<T>, object: ObjectInput): Promise<T> {
    return this.tally.note("create", type, () => this.inner.create(type, object));
  }

  replace<T extends KubeObject>(type: ResourceType<T>, object: ObjectInput): Promise<T> {
    return this.tally.note("replace", type, () => this.inner.replace(type, object));
  }

  delete(type: ResourceType, key: ObjectKey, options?: DeleteOptions): Promise<boolean> {
    return this.tally.note("delete", type, () => this.inner.delete(type, key, options));
  }

  mergePatch<T extends KubeObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    patch: object,
  ): Promise<T> {
    return this.tally.note("patch", type, () => this.inner.mergePatch(type, key, patch));
  }

  patchStatus<T extends KubeObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    status: Readonly<Record<string, unknown>>,
    options?: { readonly resourceVersion?: string },
  ): Promise<T> {
    return this.tally.note("patch-status", type, () =>
      this.inner.patchStatus(type, key, status, options),
    );
  }

  addFinalizer(
    type: ResourceType,
    key: ObjectKey,
    finalizer: string,
    known?: KnownFinalizers,
    written?: (object: KubeObject) => void,
  ): Promise<FinalizerResult> {
    return this.tally.note("add-finalizer", type, () =>
      this.inner.addFinalizer(type, key, finalizer, known, written),
    );
  }

  removeFinalizer(
    type: ResourceType,
    key: ObjectKey,
    finalizer: string,
    known?: KnownFinalizers,
  ): Promise<FinalizerResult> {
    return this.tally.note("remove-finalizer", type, () =>
      this.inner.removeFinalizer(type, key, finalizer, known),
    );
  }

  withCalls(calls: CallCounters): KubeClient {
    return new RecordingKube(this.inner.withCalls(calls), this.tally);
  }
}
