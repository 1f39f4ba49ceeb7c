/**
 * A KubeClient that notes every operation a function asks for ("list Pod", "patch status
 * Mwan3Rule"), so a bench row can say which requests make up its time. It delegates everything;
 * a finalizer change may cost more than one HTTP request (the function's own `calls.api` counts
 * those).
 */
import type {
  FinalizerResult,
  KubeClient,
  KubeObject,
  ListOptions,
  ObjectInput,
  ObjectKey,
  ResourceType,
} from "../../shared/kube/index.js";
import type { CallCounters } from "../../shared/runtime/function.js";

export class OperationTally {
  private readonly counts = new Map<string, number>();

  note(operation: string, type: ResourceType): void {
    const key = `${operation} ${type.kind}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  reset(): void {
    this.counts.clear();
  }

  total(): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0);
  }

  /** "get Mwan3Rule 1, list Pod 1, ..." with counts divided by `per` (e.g. per event). */
  describe(per = 1): string {
    return [...this.counts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, n]) => `${key} ${Number((n / per).toFixed(2))}`)
      .join(", ");
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }
}

export class RecordingKube implements KubeClient {
  constructor(
    private readonly inner: KubeClient,
    readonly tally: OperationTally = new OperationTally(),
  ) {}

  get<T extends KubeObject>(type: ResourceType<T>, key: ObjectKey): Promise<T | undefined> {
    this.tally.note("get", type);
    return this.inner.get(type, key);
  }

  list<T extends KubeObject>(type: ResourceType<T>, options?: ListOptions): Promise<T[]> {
    this.tally.note("list", type);
    return this.inner.list(type, options);
  }

  create<T extends KubeObject>(type: ResourceType<T>, object: ObjectInput): Promise<T> {
    this.tally.note("create", type);
    return this.inner.create(type, object);
  }

  replace<T extends KubeObject>(type: ResourceType<T>, object: ObjectInput): Promise<T> {
    this.tally.note("replace", type);
    return this.inner.replace(type, object);
  }

  delete(type: ResourceType, key: ObjectKey): Promise<boolean> {
    this.tally.note("delete", type);
    return this.inner.delete(type, key);
  }

  mergePatch<T extends KubeObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    patch: object,
  ): Promise<T> {
    this.tally.note("patch", type);
    return this.inner.mergePatch(type, key, patch);
  }

  patchStatus<T extends KubeObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    status: Readonly<Record<string, unknown>>,
    options?: { readonly resourceVersion?: string },
  ): Promise<T> {
    this.tally.note("patch-status", type);
    return this.inner.patchStatus(type, key, status, options);
  }

  addFinalizer(type: ResourceType, key: ObjectKey, finalizer: string): Promise<FinalizerResult> {
    this.tally.note("add-finalizer", type);
    return this.inner.addFinalizer(type, key, finalizer);
  }

  removeFinalizer(type: ResourceType, key: ObjectKey, finalizer: string): Promise<FinalizerResult> {
    this.tally.note("remove-finalizer", type);
    return this.inner.removeFinalizer(type, key, finalizer);
  }

  withCalls(calls: CallCounters): KubeClient {
    return new RecordingKube(this.inner.withCalls(calls), this.tally);
  }
}
