/**
 * One AdmissionReview from body to reply: parse (400 with the code when malformed), plan what to
 * read, read it through the AdmissionReader (nothing at all when the request needs no reads),
 * decide with the pure policies, log the verdict, answer 200 with the AdmissionReview response.
 */
import type { CallCounters, Log } from "../core/context.js";
import { ruleKinds } from "./kinds.js";
import { wantsPlan, withPlan, type DryRunPlanner } from "./dry-run.js";
import { countingReader, decideAdmission, readsNothing, type AdmissionReader } from "./observe.js";
import { planAdmission, planObservation } from "./plan-admission.js";
import { parseAdmissionReview } from "./review.js";
import { EMPTY_SNAPSHOT } from "./snapshot.js";
import { buildAdmissionResponse } from "./verdict.js";

/**
 * validate-admission's context. Not an EntryContext: admission reads through an AdmissionReader
 * (made only when a review needs a read), writes nothing and records no Events.
 */
export interface AdmitContext {
  readonly log: Log;
  readonly calls: CallCounters;
  /** Cancels a dry run's plan; none when absent. */
  readonly signal?: AbortSignal;
  /** The reads, made on first use (kube-reader.ts over the function's client). */
  readonly reader: () => AdmissionReader;
  /** Adds a dry run's plan to its warnings (dry-run.ts); without it, dry runs get none. */
  readonly planner?: DryRunPlanner;
}

export interface AdmissionReply {
  readonly status: number;
  readonly body: unknown;
}

export async function admit(body: unknown, ctx: AdmitContext): Promise<AdmissionReply> {
  const { reader, planner } = ctx;
  const parsed = parseAdmissionReview(body);
  if (!parsed.ok) {
    ctx.log.warn({ code: parsed.code, uid: parsed.uid }, parsed.message);
    return { status: 400, body: { error: parsed.code, message: parsed.message } };
  }
  const { request } = parsed;
  const plan = planObservation(request);
  const decided = readsNothing(plan)
    ? planAdmission(request, EMPTY_SNAPSHOT)
    : await decideAdmission(request, plan, countingReader(reader(), ctx.calls), (kind) =>
        ruleKinds.find(kind),
      );
  const verdict =
    planner !== undefined && wantsPlan(request, decided)
      ? await withPlan(request, decided, countingReader(reader(), ctx.calls), planner, {
          ...ctx,
          signal: ctx.signal ?? new AbortController().signal,
        })
      : decided;
  const fields = {
    uid: request.uid,
    operation: request.operation,
    object: `${request.kind.kind} ${request.namespace}/${request.name}`,
    user: request.userInfo.username,
    allowed: verdict.allowed,
    ...(verdict.allowed ? {} : { policy: verdict.policy, code: verdict.code }),
    ...(verdict.notes && verdict.notes.length > 0 ? { notes: verdict.notes } : {}),
  };
  if (verdict.allowed) ctx.log.info(fields, "admitted");
  else ctx.log.info(fields, `denied by ${verdict.policy}: ${verdict.reason}`);
  return { status: 200, body: buildAdmissionResponse(request.uid, verdict) };
}
