// A real KubeClient with a hook around some of its methods, the one proxy the tests that race a
// function use: an operator or a user acting at an exact moment, between what the function read
// and what it writes (races made deterministic), or a call made to fail.
import type { KubeClient } from "../../../shared/kube/index.js";

export type KubeMethod = Exclude<keyof KubeClient, "withCalls">;

/** `real`, each call of `methods` going through `around` (which makes it with `call`). */
export function intercepting(
  real: KubeClient,
  methods: readonly KubeMethod[],
  around: (method: KubeMethod, args: unknown[], call: () => Promise<unknown>) => Promise<unknown>,
): KubeClient {
  const wrap = (client: KubeClient): KubeClient =>
    new Proxy(client, {
      get(target, property) {
        if (property === "withCalls") {
          return (calls: Parameters<KubeClient["withCalls"]>[0]) => wrap(target.withCalls(calls));
        }
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== "function") return value;
        const bound = (value as (...args: unknown[]) => Promise<unknown>).bind(target);
        const method = property as KubeMethod;
        if (!methods.includes(method)) return bound;
        return (...args: unknown[]) => around(method, args, () => bound(...args));
      },
    });
  return wrap(real);
}

/**
 * `first` runs (on the real API server, once) just before the function's first call of `method`
 * that `when` picks.
 */
export function actingBefore(
  real: KubeClient,
  method: KubeMethod,
  first: () => Promise<void>,
  when: (...args: unknown[]) => boolean = () => true,
): KubeClient {
  let acted = false;
  return intercepting(real, [method], async (_, args, call) => {
    if (!acted && when(...args)) {
      acted = true;
      await first();
    }
    return call();
  });
}

/** `before(status)` runs before each of the function's status writes (patchStatus). */
export function beforeStatusWrites(
  real: KubeClient,
  before: (status: Record<string, unknown>) => Promise<void>,
): KubeClient {
  return intercepting(real, ["patchStatus"], async (_, args, call) => {
    await before(args[2] as Record<string, unknown>);
    return call();
  });
}
