/**
 * The per-CNF sync Lease (ADR 0008): a CNF-wide sync (a Pod or Deployment event of one CNF)
 * holds a coordination.k8s.io Lease named after its CNF while it reads and writes, in the
 * namespace of the prune ledgers, which holds only this function's own state. A second sync of
 * the same CNF that finds the Lease held either has nothing to do (the holder began after its
 * change: "covered") or waits for the Lease and runs after the holder. Nothing lives in memory:
 * a holder that dies leaves a Lease that expires, and an event that was not answered is
 * redelivered.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { setTimeout as delay } from "node:timers/promises";
import { isKubeError, type Lease } from "../kube/index.js";
import type { Log } from "../core/context.js";
import type { CnfScope } from "./observed.js";
import { cnfLeaseObject, decideHeldLease, type CnfLeaseObject } from "./plan-cnf-lease.js";
import { messageOf } from "../core/error-message.js";
import type { SyncStore } from "./store.js";

export interface CnfLeaseSettings {
  /** Where the Leases live (the prune ledgers' namespace). */
  readonly namespace: string;
  /** How long a holder may hold a Lease before another sync takes it over. */
  readonly seconds: number;
  /** How long a sync waits for a held Lease before it answers "retry later". */
  readonly waitMs: number;
}

export interface CnfLeaseContext {
  readonly store: SyncStore;
  readonly log: Log;
  readonly signal: AbortSignal;
  readonly now: () => string;
}

/** How a sync under the Lease went: its own result, or why it did not run. */
export type LeaseOutcome<T> =
  | { readonly kind: "ran"; readonly value: T }
  /** A sync that holds the Lease began after this sync's trigger: it covers this one. */
  | { readonly kind: "covered"; readonly holder: string }
  /** The Lease stayed held past `waitMs`. */
  | { readonly kind: "busy"; readonly holder: string };

const FIRST_POLL_MS = 25;
const MAX_POLL_MS = 500;

type Acquired =
  | { readonly kind: "acquired"; readonly lease: Lease }
  | { readonly kind: "covered" | "busy"; readonly holder: string };

/**
 * Runs `sync` while holding the CNF's Lease, unless a holder covers it. A Lease that cannot be
 * used at all (no grant, no namespace) is warned about and `sync` runs uncoordinated, as it did
 * before Leases: coordination saves work, correctness never depends on it.
 */
export async function withCnfLease<T>(
  ctx: CnfLeaseContext,
  settings: CnfLeaseSettings,
  scope: CnfScope,
  triggerVersion: string | undefined,
  sync: () => Promise<T>,
): Promise<LeaseOutcome<T>> {
  const holder = `${hostname()}/${randomUUID()}`;
  let acquired: Acquired;
  try {
    acquired = await acquire(ctx, settings, scope, holder, triggerVersion);
  } catch (error) {
    const reason = leaseNotUsableReason(error, settings.namespace);
    if (reason === undefined) throw error;
    ctx.log.warn(
      { cnf: `${scope.namespace}/${scope.purpose}` },
      `CNF sync not coordinated (${reason}): ${messageOf(error)}`,
    );
    return { kind: "ran", value: await sync() };
  }
  if (acquired.kind !== "acquired") return acquired;
  try {
    return { kind: "ran", value: await sync() };
  } finally {
    await release(ctx, settings, acquired.lease);
  }
}

async function acquire(
  ctx: CnfLeaseContext,
  settings: CnfLeaseSettings,
  scope: CnfScope,
  holder: string,
  triggerVersion: string | undefined,
): Promise<Acquired> {
  // Built at each attempt: a Lease taken after a wait says when it was taken, not when we began.
  const ours = () => cnfLeaseObject(settings.namespace, scope, holder, settings.seconds, ctx.now());
  const key = { namespace: settings.namespace, name: ours().metadata.name };
  const deadline = Date.now() + settings.waitMs;
  let pollMs = FIRST_POLL_MS;
  let lastHolder = "";
  for (;;) {
    if (Date.now() > deadline) return { kind: "busy", holder: lastHolder };
    try {
      return { kind: "acquired", lease: await ctx.store.createLease(ours()) };
    } catch (error) {
      if (!isKubeError(error, "conflict")) throw error;
    }
    const held = await ctx.store.getLease(key);
    if (held === undefined) continue; // released between our create and our read
    lastHolder = held.spec?.holderIdentity ?? "";
    const decision = decideHeldLease({ lease: held, now: ctx.now(), triggerVersion });
    if (decision === "covered") return { kind: "covered", holder: lastHolder };
    if (decision === "take") {
      const taken = await takeOver(ctx, ours(), held);
      if (taken !== undefined) return { kind: "acquired", lease: taken };
      continue; // someone else took it or released it first: look again
    }
    if (Date.now() + pollMs > deadline) return { kind: "busy", holder: lastHolder };
    await delay(pollMs, undefined, { signal: ctx.signal });
    pollMs = Math.min(pollMs * 2, MAX_POLL_MS);
  }
}

/** Replaces an expired Lease with ours, unless it changed since it was read (then undefined). */
async function takeOver(
  ctx: CnfLeaseContext,
  object: CnfLeaseObject,
  held: Lease,
): Promise<Lease | undefined> {
  const taken = {
    ...object,
    metadata: { ...object.metadata, resourceVersion: held.metadata.resourceVersion },
  };
  try {
    return await ctx.store.replaceLease(taken);
  } catch (error) {
    if (isKubeError(error, "conflict") || isKubeError(error, "notFound")) return undefined;
    throw error;
  }
}

/** Deletes the Lease as we wrote it; one that changed hands or is gone is left alone. */
async function release(
  ctx: CnfLeaseContext,
  settings: CnfLeaseSettings,
  lease: Lease,
): Promise<void> {
  const { name, resourceVersion } = lease.metadata;
  try {
    await ctx.store.deleteLease(
      { namespace: settings.namespace, name },
      resourceVersion === undefined ? {} : { resourceVersion },
    );
  } catch (error) {
    if (isKubeError(error, "conflict") || isKubeError(error, "notFound")) return;
    // It expires on its own; the next sync of this CNF waits at most that long.
    ctx.log.warn(
      { lease: `${settings.namespace}/${name}` },
      `CNF sync Lease not released: ${messageOf(error)}`,
    );
  }
}

/** Why the Lease cannot be used in a way retrying will not fix; undefined for anything else. */
function leaseNotUsableReason(error: unknown, namespace: string): string | undefined {
  if (isKubeError(error, "forbidden")) {
    return `grant get, create, update and delete on leases in namespace ${namespace}`;
  }
  if (isKubeError(error, "notFound")) return `create namespace ${namespace}`;
  return undefined;
}
