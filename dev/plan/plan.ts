/**
 * `npm run plan`'s planning: the objects of the files as the API server would store them after
 * `kubectl apply` (or `kubectl delete`), then shared/sync's preview, the same one a dry run gets
 * from the webhook, with the caller's own rights: the API reads, the CNF credentials Secret and
 * the Secrets rules name by reference are read as the caller may read them.
 */
import {
  DEFAULT_RESTART_QUIET_MS,
  cnfClientTuningFromEnv,
  type Env,
} from "../../shared/cnf/index.js";
import type { CallCounters, Log } from "../../shared/core/context.js";
import { ruleResource, type KubeClient, type KubeObject } from "../../shared/kube/index.js";
import { byKind } from "../../shared/kinds/index.js";
import {
  cnfCredentialsSecret,
  previewChanges,
  readCnfCredentials,
  ruleAfterApply,
  type PacingSettings,
  type PreviewReport,
  type RuleChange,
  type Skipped,
} from "../../shared/sync/index.js";

/**
 * The pacing the shipped manifests set (stack.yml, manifests/knative/services.yaml:
 * CNF_RESTART_MIN_INTERVAL_MS=10000; a unit test keeps them equal), used unless the environment
 * says otherwise, so the plan counts restarts as a deployed system pays them.
 */
export const SHIPPED_RESTART_MIN_INTERVAL_MS = 10_000;

/** The pacing a burst is planned under: CNF_RESTART_* when set, else the shipped one. */
export function planPacing(env: Env): PacingSettings {
  const tuned = cnfClientTuningFromEnv(env).restartPacing;
  const set = (name: string) => (env[name] ?? "").trim() !== "";
  return {
    minIntervalMs: set("CNF_RESTART_MIN_INTERVAL_MS")
      ? tuned.minIntervalMs
      : SHIPPED_RESTART_MIN_INTERVAL_MS,
    quietMs: set("CNF_RESTART_QUIET_MS") ? tuned.quietMs : DEFAULT_RESTART_QUIET_MS,
  };
}

export interface PlanFilesInput {
  readonly kube: KubeClient;
  readonly env: Env;
  readonly objects: readonly KubeObject[];
  readonly delete: boolean;
  /** Namespace of the objects that name none. */
  readonly namespace: string;
  readonly log: Log;
  readonly calls?: CallCounters;
  /** Default 20 s: many rules on many pods. */
  readonly deadlineMs?: number;
}

const skipped = (object: KubeObject, namespace: string, why: string): Skipped => ({
  kind: object.kind,
  namespace,
  name: object.metadata.name,
  why,
});

/** The change each object makes once applied (or deleted), or why it makes none. */
async function changeOf(input: PlanFilesInput, given: KubeObject): Promise<RuleChange | Skipped> {
  const namespace = given.metadata.namespace ?? input.namespace;
  const object = { ...given, metadata: { ...given.metadata, namespace } };
  const entry = byKind(object.kind);
  if (entry === undefined)
    return skipped(object, namespace, `${object.kind} is not an SDEWAN rule kind`);
  const live = await input.kube.get(ruleResource(entry), { namespace, name: object.metadata.name });
  if (input.delete) {
    if (live === undefined) return skipped(object, namespace, "not found: nothing to delete");
    return { action: "delete", object: live };
  }
  const after = ruleAfterApply(object, live);
  return "skipped" in after
    ? skipped(object, namespace, after.skipped)
    : { action: "apply", object: after.stored };
}

/** The plan of applying (or deleting) `input.objects`, as the functions would carry it out. */
export async function planFiles(
  input: PlanFilesInput,
): Promise<PreviewReport & { pacing: PacingSettings }> {
  const changes = await Promise.all(input.objects.map((object) => changeOf(input, object)));
  const secret = cnfCredentialsSecret(input.env);
  const credentials = await readCnfCredentials(input.kube, secret, input.env, "you");
  const pacing = planPacing(input.env);
  const report = await previewChanges(
    {
      kube: input.kube,
      env: input.env,
      calls: input.calls ?? { api: 0, cnf: 0 },
      log: input.log,
      signal: new AbortController().signal,
      now: () => new Date().toISOString(),
      credentials,
      secretRefs: "read",
      pacing,
      deadlineMs: input.deadlineMs ?? 20_000,
    },
    changes.filter((c): c is RuleChange => "action" in c),
  );
  const notActed = changes.filter((c): c is Skipped => !("action" in c));
  return { ...report, skipped: [...notActed, ...report.skipped], pacing };
}
