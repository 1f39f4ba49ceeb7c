/**
 * What every function is built from, wired the same way in each: `create<Function>(deps)` takes
 * any of these, `functionDeps` fills in the rest. Tests pass their own API client (a test user's
 * identity), environment and clock.
 */
import { hostname } from "node:os";
import type { CallCounters } from "../core/context.js";
import {
  defaultKubeClient,
  kubeEventRecorder,
  type EventRecorder,
  type KubeClient,
} from "../kube/index.js";

export type Env = Readonly<Record<string, string | undefined>>;

export interface FunctionDeps {
  /** The API client; by default in-cluster or KUBECONFIG, created on first use. */
  readonly kube: () => KubeClient;
  readonly env: Env;
  readonly now: () => Date;
}

export function functionDeps(given: Partial<FunctionDeps> = {}): FunctionDeps {
  return {
    kube: given.kube ?? defaultKubeClient,
    env: given.env ?? process.env,
    now: given.now ?? (() => new Date()),
  };
}

/** A positive integer from the environment, else `fallback`. */
export function positiveIntFromEnv(env: Env, name: string, fallback: number): number {
  const value = Number(env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

/**
 * The Event recorder of function `name` for one event: reportingController
 * sdewan.akraino.org/<name>, reportingInstance the pod (POD_NAME, else HOSTNAME). Its writes are
 * counted apart from the event's API calls, in `calls.eventsRecorded` / `eventsDropped`.
 */
export function eventRecorder(
  deps: FunctionDeps,
  name: string,
  calls: CallCounters,
): EventRecorder {
  const instance = deps.env["POD_NAME"] ?? deps.env["HOSTNAME"] ?? hostname();
  return kubeEventRecorder(deps.kube(), {
    controller: `sdewan.akraino.org/${name}`,
    instance,
    calls,
    now: deps.now,
  });
}
