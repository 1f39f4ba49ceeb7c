// A KubeClient whose watch-cache lists (resourceVersion "0") of one kind answer with copies
// frozen earlier: the API server's watch cache lagging behind etcd, made to happen on demand.
// Everything else, writes included, goes to the real API server, so a write computed from a
// frozen copy meets the real server's 409 (shared/kube/freshness.ts, ADR 0004's addendum).
import { isKubeError, type KubeClient, type ResourceType } from "../../../shared/kube/index.js";
import type { KubeObject } from "../../../shared/core/objects.js";

const keyOf = (o: KubeObject): string => `${o.metadata.namespace ?? ""}/${o.metadata.name}`;

export class StaleCache {
  private readonly frozen = new Map<string, KubeObject>();
  /** Lists of the kind: from the (stale) cache, and consistent. Writes refused with 409. */
  readonly seen = { cachedLists: 0, consistentLists: 0, conflicts: 0 };

  constructor(private readonly type: ResourceType) {}

  /** From now on the cache answers these objects as they are now. */
  freeze(objects: readonly KubeObject[]): void {
    for (const o of objects) this.frozen.set(keyOf(o), o);
  }

  client(inner: KubeClient): KubeClient {
    const counted = async <T>(write: () => Promise<T>): Promise<T> => {
      try {
        return await write();
      } catch (error) {
        if (isKubeError(error, "conflict")) this.seen.conflicts += 1;
        throw error;
      }
    };
    return {
      get: (type, key, options) => inner.get(type, key, options),
      list: async (type, options) => {
        const fresh = await inner.list(type, options);
        if (type !== this.type) return fresh;
        if (options?.resourceVersion !== "0") {
          this.seen.consistentLists += 1;
          return fresh;
        }
        this.seen.cachedLists += 1;
        return fresh.map((o) => (this.frozen.get(keyOf(o)) as typeof o | undefined) ?? o);
      },
      create: (type, object) => counted(() => inner.create(type, object)),
      replace: (type, object) => counted(() => inner.replace(type, object)),
      delete: (type, key, options) => counted(() => inner.delete(type, key, options)),
      mergePatch: (type, key, patch) => inner.mergePatch(type, key, patch),
      patchStatus: (type, key, status, options) => inner.patchStatus(type, key, status, options),
      addFinalizer: (type, key, finalizer, known) =>
        inner.addFinalizer(type, key, finalizer, known),
      removeFinalizer: (type, key, finalizer, known) =>
        inner.removeFinalizer(type, key, finalizer, known),
      withCalls: (calls) => this.client(inner.withCalls(calls)),
    };
  }
}
