/**
 * The reads of a preview (docs/plan.md): for each CNF a change of rules concerns, its Deployment
 * and Pods, the rules that may reference the changed ones, and what each ready pod holds of their
 * objects, read with GETs only (a CnfClient whose writes are never called). plan-preview.ts
 * decides from that. Nothing is written anywhere. A pod that cannot be read is named in the plan
 * with why; the preview itself never fails for it.
 */
import pLimit from "p-limit";
import {
  CnfClient,
  type CnfCredentials,
  cnfBaseUrl,
  cnfCaFromEnv,
  cnfClientTuningFromEnv,
  cnfCredentialsFromSecretData,
  cnfEndpointConfig,
  isCnfError,
  type Env,
} from "../cnf/index.js";
import { KeyMaterial } from "../core/redact.js";
import type { CallCounters, Log } from "../core/context.js";
import { messageOf } from "../core/error-message.js";
import {
  isKubeError,
  kubeObjectSchema,
  readOptions,
  ruleResource,
  type KubeClient,
  type KubeObject,
} from "../kube/index.js";
import {
  PURPOSE_LABEL,
  isRuleKind,
  kindsReferencing,
  requireKind,
  ruleKey,
  type RuleKindEntry,
} from "../kinds/index.js";
import { readHoldings } from "./apply-pod.js";
import { observeCnf } from "./observe.js";
import {
  parseRuleObject,
  type CnfObservation,
  type CnfScope,
  type ObservedRuleCr,
} from "./observed.js";
import {
  planBurstRestarts,
  planPreview,
  planWithheld,
  previewTargets,
  ruleAfterDelete,
  type CnfPlan,
  type PacingSettings,
  type PodReading,
  type PreviewReport,
  type Skipped,
  type UnreadKeys,
} from "./plan-preview.js";

export type { PreviewReport, Skipped } from "./plan-preview.js";
import { planWarnings } from "./plan-preview-text.js";
import { holdingsOf } from "./plan-targets.js";
import type { RuleTarget } from "./plan-writes.js";
import { SecretReader, resolveSecretRefs } from "./secret-refs.js";
import type { SyncStore } from "./store.js";
import { kubeSyncStore } from "./kube-store.js";

/** A whole preview is given up on after this long: a dry run must answer within the webhook's 5 s. */
export const DEFAULT_PREVIEW_DEADLINE_MS = 2500;
/** One CNF read of a preview: shorter than the functions' own, no in-process retry. */
const PREVIEW_CNF_TIMEOUT_MS = 1000;

/** The Secret with the CNF credentials, as in docs/deploy.md; CNF_CREDENTIALS_SECRET overrides. */
export const DEFAULT_CNF_CREDENTIALS_SECRET = {
  namespace: "sdewan-system",
  name: "sdewan-cnf-credentials",
} as const;

export interface SecretName {
  readonly namespace: string;
  readonly name: string;
}

/** CNF_CREDENTIALS_SECRET ("<namespace>/<name>"), else the default; a malformed value throws. */
export function cnfCredentialsSecret(env: Env): SecretName {
  const text = env["CNF_CREDENTIALS_SECRET"]?.trim();
  if (text === undefined || text === "") return DEFAULT_CNF_CREDENTIALS_SECRET;
  const [namespace, name, ...rest] = text.split("/");
  if (
    namespace === undefined ||
    name === undefined ||
    namespace === "" ||
    name === "" ||
    rest.length > 0
  ) {
    throw new Error(
      `CNF_CREDENTIALS_SECRET must be <namespace>/<name>, got ${JSON.stringify(text)}`,
    );
  }
  return { namespace, name };
}

export interface PreviewContext {
  /** Whose rights every API read has (the webhook's, or the user's in `npm run plan`). */
  readonly kube: KubeClient;
  /** CNF endpoint settings (CNF_SCHEME, CNF_PORT, CNF_CA_FILE), as the functions read them. */
  readonly env: Env;
  readonly calls: CallCounters;
  readonly log: Log;
  readonly signal: AbortSignal;
  readonly now: () => string;
  /**
   * The CNF login, or why this caller is shown no CNF state (then nothing about the CNF is read);
   * a promise of either is awaited beside the API reads.
   */
  readonly credentials: Credentials | Promise<Credentials>;
  /** Read Secrets named by reference with `kube`'s rights, or leave their keys uncompared. */
  readonly secretRefs: "read" | "skip";
  readonly pacing: PacingSettings;
  readonly deadlineMs?: number;
}

/**
 * One change: "apply" with the object as the API server stores it after the change (a dry run's
 * object), "delete" with the object as stored now.
 */
export interface RuleChange {
  readonly action: "apply" | "delete";
  readonly object: KubeObject;
}

/** A CNF login, or why there is none to use. */
export type Credentials = CnfCredentials | { readonly withheld: string };

/** The CNF login from the credentials Secret, read with `kube`'s rights, or why there is none. */
export async function readCnfCredentials(
  kube: KubeClient,
  secret: SecretName,
  env: Env,
  who: string,
): Promise<Credentials> {
  const what = `Secret ${secret.namespace}/${secret.name} (the CNF credentials)`;
  try {
    const found = await kubeSyncStore(kube).getSecret(secret);
    if (found === undefined) return { withheld: `${what} does not exist` };
    return cnfCredentialsFromSecretData(found.data, env);
  } catch (error) {
    if (isKubeError(error, "forbidden")) return { withheld: `${who} may not get ${what}` };
    return { withheld: `${what} could not be read: ${messageOf(error)}` };
  }
}

interface Prepared {
  readonly scope: CnfScope;
  readonly rules: ObservedRuleCr[];
}

function skippedOf(object: KubeObject, why: string): Skipped {
  return {
    kind: object.kind,
    namespace: object.metadata.namespace ?? "",
    name: object.metadata.name,
    why,
  };
}

/** The changed rules as the functions would read them, grouped by CNF; the rest skipped. */
function prepare(
  changes: readonly RuleChange[],
  now: string,
): { groups: Map<string, Prepared>; skipped: Skipped[] } {
  const groups = new Map<string, Prepared>();
  const skipped: Skipped[] = [];
  for (const change of changes) {
    const { object } = change;
    if (!isRuleKind(object.kind)) {
      skipped.push(skippedOf(object, `${object.kind} is not an SDEWAN rule kind`));
      continue;
    }
    const next = change.action === "delete" ? ruleAfterDelete(object, now) : { stored: object };
    if ("skipped" in next) {
      skipped.push(skippedOf(object, next.skipped));
      continue;
    }
    const after = next.stored;
    const purpose = after.metadata.labels?.[PURPOSE_LABEL];
    if (purpose === undefined) {
      skipped.push(skippedOf(object, `no ${PURPOSE_LABEL} label: no CNF applies it`));
      continue;
    }
    const scope = { namespace: after.metadata.namespace ?? "", purpose };
    const id = `${scope.namespace}/${scope.purpose}`;
    const group = groups.get(id) ?? { scope, rules: [] };
    group.rules.push(parseRuleObject(after));
    groups.set(id, group);
  }
  return { groups, skipped };
}

/** The keys named by reference that stay unread, per rule key. */
function unreadKeysOf(rule: ObservedRuleCr): UnreadKeys | undefined {
  if (!rule.ok || rule.cr.metadata.deletionTimestamp !== undefined) return undefined;
  const refs = requireKind(rule.cr.kind).secretRefs(rule.cr.spec);
  if (refs.length === 0) return undefined;
  return { fields: refs.map((r) => r.field), secrets: [...new Set(refs.map((r) => r.name))] };
}

/**
 * Secrets named by reference, read as the functions read them ("read": with the caller's rights;
 * a Secret the caller may not read leaves that rule's key uncompared), or not at all ("skip").
 */
async function resolveKeys(
  ctx: PreviewContext,
  rules: readonly ObservedRuleCr[],
): Promise<{ rules: ObservedRuleCr[]; unread: Map<string, UnreadKeys> }> {
  const unread = new Map<string, UnreadKeys>();
  const reader = new SecretReader(kubeSyncStore(ctx.kube));
  const resolved = await Promise.all(
    rules.map(async (rule) => {
      const keys = unreadKeysOf(rule);
      if (keys === undefined || !rule.ok) return rule;
      if (ctx.secretRefs === "read") {
        const [read] = await resolveSecretRefs(reader, [rule]);
        if (read !== undefined && (read.ok || read.code !== "SecretForbidden")) return read;
      }
      unread.set(ruleKey({ kind: rule.cr.kind, name: rule.cr.metadata.name }), keys);
      return rule;
    }),
  );
  return { rules: resolved, unread };
}

/**
 * The rules of the CNF of kinds that may reference the changed ones (one list per kind), from
 * the API server's watch cache, as the CNF's pods are read.
 */
async function listReferring(
  store: SyncStore,
  scope: CnfScope,
  rules: readonly ObservedRuleCr[],
): Promise<ObservedRuleCr[]> {
  const kinds = new Map<string, RuleKindEntry>();
  for (const rule of rules) {
    const kind = rule.ok ? rule.cr.kind : rule.raw.kind;
    if (!isRuleKind(kind)) continue;
    for (const entry of kindsReferencing(kind)) kinds.set(entry.kind, entry);
  }
  const lists = await Promise.all(
    [...kinds.values()].map((entry) =>
      store.listRules(ruleResource(entry), {
        namespace: scope.namespace,
        labelSelector: { [PURPOSE_LABEL]: scope.purpose },
        ...readOptions("cached"),
      }),
    ),
  );
  return lists.flat().map(parseRuleObject);
}

/** What every ready pod holds of `targets`' objects, read with GETs; never throws. */
async function readPods(
  ctx: PreviewContext & { readonly credentials: CnfCredentials },
  observation: CnfObservation,
  targets: readonly RuleTarget[],
  signal: AbortSignal,
): Promise<PodReading[]> {
  const limit = pLimit(4);
  return Promise.all(
    observation.pods.ready.map((pod) =>
      limit(async (): Promise<PodReading> => {
        if (targets.length === 0) return { pod: pod.name, ok: true, holdings: new Map() };
        try {
          const endpoint = cnfEndpointConfig(ctx.env, observation.deployment?.metadata.annotations);
          const tuning = cnfClientTuningFromEnv(ctx.env);
          const client = new CnfClient({
            baseUrl: cnfBaseUrl(endpoint, pod.ip),
            credentials: ctx.credentials,
            calls: ctx.calls,
            signal,
            log: ctx.log,
            // A CNF's own texts may echo keys the preview never read: withhold them all.
            keys: () => Promise.resolve(new KeyMaterial([], false)),
            timeoutMs: Math.min(tuning.timeoutMs, PREVIEW_CNF_TIMEOUT_MS),
            retry: { retries: 0 },
            ca: cnfCaFromEnv(ctx.env),
          });
          const held = await readHoldings(client, targets, "items");
          return { pod: pod.name, ok: true, holdings: holdingsOf(held) };
        } catch (error) {
          const reason = signal.aborted ? "no answer within the preview's deadline" : why(error);
          return { pod: pod.name, ok: false, reason };
        }
      }),
    ),
  );
}

/** A CNF failure without the endpoint and operation its message starts with (the pod is named). */
function why(error: unknown): string {
  if (!isCnfError(error)) return messageOf(error);
  const prefix = `CNF ${error.endpoint} ${error.operation}: `;
  const detail = error.message.startsWith(prefix)
    ? error.message.slice(prefix.length)
    : error.message;
  return detail;
}

async function previewCnf(
  ctx: PreviewContext,
  group: Prepared,
  signal: AbortSignal,
): Promise<CnfPlan> {
  const known = ctx.credentials;
  if (!(known instanceof Promise) && "withheld" in known) {
    return planWithheld(group.scope, group.rules, known.withheld);
  }
  const store = kubeSyncStore(ctx.kube);
  const [credentials, observation, others, keys] = await Promise.all([
    known,
    // From the watch cache: a consistent list can wait 100 ms for it (ADR 0004's addendum), and
    // a preview acts on nothing it reads.
    observeCnf(store, group.scope, "cached"),
    listReferring(store, group.scope, group.rules),
    resolveKeys(ctx, group.rules),
  ]);
  if ("withheld" in credentials) {
    return planWithheld(group.scope, group.rules, credentials.withheld);
  }
  const targets = previewTargets(keys.rules, observation);
  const pods = await readPods({ ...ctx, credentials }, observation, targets, signal);
  const plan = planPreview({
    scope: group.scope,
    observation,
    rules: keys.rules,
    pods,
    others,
    keysUnread: keys.unread,
  });
  return planBurstRestarts(plan, ctx.pacing);
}

/**
 * The plan of `changes`: per CNF, what reconcile-rule would do for each changed rule on each
 * ready pod, and what the change costs every pod as one burst. API failures throw (the caller
 * says so); CNF failures land in the plan.
 */
export async function previewChanges(
  ctx: PreviewContext,
  changes: readonly RuleChange[],
): Promise<PreviewReport> {
  const { groups, skipped } = prepare(changes, ctx.now());
  const signal = AbortSignal.any([
    ctx.signal,
    AbortSignal.timeout(ctx.deadlineMs ?? DEFAULT_PREVIEW_DEADLINE_MS),
  ]);
  const cnfs = await Promise.all([...groups.values()].map((g) => previewCnf(ctx, g, signal)));
  return { cnfs, skipped };
}

/** An AdmissionReview's change, as validate-admission hands it over. */
export interface ReviewedChange {
  readonly operation: string;
  readonly object?: unknown;
  readonly oldObject?: unknown;
}

/**
 * The change a dry-run review asks about: the object the API server would store (CREATE,
 * UPDATE) or the one it would delete (DELETE); undefined for anything else.
 */
export function changeOfReview(review: ReviewedChange): RuleChange | undefined {
  const action = review.operation === "DELETE" ? "delete" : "apply";
  if (
    review.operation !== "DELETE" &&
    review.operation !== "CREATE" &&
    review.operation !== "UPDATE"
  ) {
    return undefined;
  }
  const parsed = kubeObjectSchema.safeParse(action === "delete" ? review.oldObject : review.object);
  return parsed.success ? { action, object: parsed.data } : undefined;
}

/** What a dry-run review's plan is made with: the webhook's identity and settings. */
export interface ReviewPreviewContext extends Pick<
  PreviewContext,
  "kube" | "env" | "calls" | "log" | "signal" | "now"
> {
  /** The Secret with the CNF credentials, read with the webhook's rights when access allows. */
  readonly credentialsSecret: SecretName;
}

/**
 * The plan of a dry-run review as warnings within `budget` runes (validate-admission). CNF state
 * is read only when `access` allows, with the credentials the webhook reads from their Secret;
 * Secrets named by reference are not read (the webhook may not read them).
 */
export async function previewReviewWarnings(
  ctx: ReviewPreviewContext,
  review: ReviewedChange,
  access: { readonly allowed: true } | { readonly allowed: false; readonly why: string },
  budget: number,
): Promise<string[]> {
  const change = changeOfReview(review);
  if (change === undefined) return [];
  // Read beside the CNF's Deployment and Pods, not before them.
  const credentials = access.allowed
    ? readCnfCredentials(ctx.kube, ctx.credentialsSecret, ctx.env, "the webhook")
    : { withheld: access.why };
  const report = await previewChanges(
    {
      ...ctx,
      credentials,
      secretRefs: "skip",
      pacing: cnfClientTuningFromEnv(ctx.env).restartPacing,
    },
    [change],
  );
  return planWarnings(report, budget);
}
