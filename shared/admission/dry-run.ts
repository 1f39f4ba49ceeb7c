/**
 * A dry run's plan (docs/plan.md): for an allowed `kubectl apply|delete --dry-run=server` of a
 * rule, the plan of the change is added to the reply as warnings. Only dry runs get it, so a
 * normal review reads nothing more than before. Who may not get the Secret with the CNF's
 * credentials is shown no CNF state: the API server is asked (a SubjectAccessReview, as the
 * secret-access policy asks), and an answer it cannot give withholds the state. A plan that
 * cannot be made is said in a warning; the dry run itself never fails for it.
 */
import type { CallCounters, Log } from "../core/context.js";
import { messageOf } from "../core/error-message.js";
import { classifyRequest } from "./plan-admission.js";
import { ruleKinds } from "./kinds.js";
import { secretAccess, type AdmissionReader } from "./observe.js";
import type { AdmissionRequest } from "./review.js";
import type { SecretAccess } from "./snapshot.js";
import { WARNING_TOTAL_RUNES, warningRunes, type Verdict } from "./verdict.js";

/** Whether the requester may see CNF state, and if not, why (a sentence for the plan). */
export type CnfStateAccess =
  { readonly allowed: true } | { readonly allowed: false; readonly why: string };

/** The review's logger, counters and cancellation. */
export interface PlanContext {
  readonly log: Log;
  readonly calls: CallCounters;
  readonly signal: AbortSignal;
}

/** Makes the plan of a dry-run review; functions/validate-admission wires shared/sync's preview. */
export interface DryRunPlanner {
  /** The Secret with the CNF credentials: a requester who may not get it sees no CNF state. */
  readonly credentialsSecret: { readonly namespace: string; readonly name: string };
  /** The plan as warnings, `budget` runes at most in all. */
  plan(
    request: AdmissionRequest,
    access: CnfStateAccess,
    budget: number,
    ctx: PlanContext,
  ): Promise<readonly string[]>;
}

function accessOf(answer: SecretAccess, user: string, secret: string): CnfStateAccess {
  if (answer.allowed !== "unknown") {
    if (answer.allowed) return { allowed: true };
    return { allowed: false, why: `"${user}" may not get Secret ${secret}` };
  }
  return {
    allowed: false,
    why: `whether "${user}" may get Secret ${secret} could not be checked (${answer.why})`,
  };
}

/** Whether `request` is a dry run this planner answers: an allowed change of a rule kind. */
export function wantsPlan(request: AdmissionRequest, verdict: Verdict): boolean {
  return (
    request.dryRun === true &&
    verdict.allowed &&
    request.operation !== "CONNECT" &&
    classifyRequest(request, ruleKinds).type === "rule"
  );
}

/** `verdict` with the plan of the dry run added to its warnings. */
export async function withPlan(
  request: AdmissionRequest,
  verdict: Verdict,
  reader: AdmissionReader,
  planner: DryRunPlanner,
  ctx: PlanContext,
): Promise<Verdict> {
  const { namespace, name } = planner.credentialsSecret;
  const answer = await secretAccess(reader, namespace, request.userInfo, name);
  const access = accessOf(answer, request.userInfo.username, `${namespace}/${name}`);
  const budget = WARNING_TOTAL_RUNES - warningRunes(verdict.warnings);
  let plan: readonly string[];
  try {
    plan = await planner.plan(request, access, budget, ctx);
  } catch (error) {
    ctx.log.warn({ uid: request.uid, error: messageOf(error) }, "dry-run plan failed");
    plan = [`plan: could not be made: ${messageOf(error)}`.slice(0, 120)];
  }
  return { ...verdict, warnings: [...verdict.warnings, ...plan] };
}
