// A real KubeClient with one hook: `first` runs (on the real API server, once) just before the
// function's first call of `method` that `when` picks: an operator or a user acting at that
// exact moment, between what the function read and what it writes. Races made deterministic.
import type { KubeClient } from "../../../shared/kube/index.js";

export type KubeMethod = Exclude<keyof KubeClient, "withCalls">;

export function actingBefore(
  real: KubeClient,
  method: KubeMethod,
  first: () => Promise<void>,
  when: (...args: unknown[]) => boolean = () => true,
): KubeClient {
  let acted = false;
  const wrap = (client: KubeClient): KubeClient =>
    new Proxy(client, {
      get(target, property) {
        if (property === "withCalls") {
          return (calls: Parameters<KubeClient["withCalls"]>[0]) => wrap(target.withCalls(calls));
        }
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== "function") return value;
        const bound = (value as (...args: unknown[]) => unknown).bind(target);
        if (property !== method) return bound;
        return async (...args: unknown[]) => {
          if (!acted && when(...args)) {
            acted = true;
            await first();
          }
          return bound(...args);
        };
      },
    });
  return wrap(real);
}
