/**
 * Pure rules of the per-CNF sync Lease (cnf-lease.ts): one CNF-wide sync at a time, coordinated
 * through the API server, not memory. A pod restart delivers a Pod event and a Deployment event
 * at once; without the Lease both synced the whole CNF concurrently and both wrote every rule.
 * Why a Lease and what "covered" means: docs/adr/0008-one-cnf-sync-at-a-time.md.
 */
import { createHash } from "node:crypto";
import { microTime } from "../core/micro-time.js";
import type { Lease } from "../core/objects.js";
import { CNF_NAMESPACE_LABEL, type CnfScope } from "./observed.js";

/** On every CNF sync Lease, with CNF_NAMESPACE_LABEL: the CNF's sdewanPurpose (names are hashed). */
export const LEASE_CNF_PURPOSE_ANNOTATION = "sdewan.akraino.org/cnf-purpose";

/**
 * "cnf-sync-" + a hash of namespace and purpose: a purpose label value may hold characters a
 * Lease name may not (upper case, "_"), and the pair could exceed a name's length.
 */
export function cnfLeaseName(scope: CnfScope): string {
  const digest = createHash("sha256").update(`${scope.namespace}/${scope.purpose}`).digest("hex");
  return `cnf-sync-${digest.slice(0, 32)}`;
}

// A type, not an interface: it must fit KubeClient's ObjectInput (an index signature).
export type CnfLeaseObject = {
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly labels: Readonly<Record<string, string>>;
    readonly annotations: Readonly<Record<string, string>>;
  };
  readonly spec: {
    readonly holderIdentity: string;
    readonly leaseDurationSeconds: number;
    readonly acquireTime: string;
    readonly renewTime: string;
  };
};

export function cnfLeaseObject(
  namespace: string,
  scope: CnfScope,
  holder: string,
  seconds: number,
  now: string,
): CnfLeaseObject {
  const time = microTime(now);
  return {
    metadata: {
      name: cnfLeaseName(scope),
      namespace,
      labels: {
        "app.kubernetes.io/part-of": "sdewan",
        [CNF_NAMESPACE_LABEL]: scope.namespace,
      },
      annotations: { [LEASE_CNF_PURPOSE_ANNOTATION]: scope.purpose },
    },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds: seconds,
      acquireTime: time,
      renewTime: time,
    },
  };
}

/**
 * What a sync does about a Lease held by someone else:
 * - "take": it has expired (its holder died or overran it), so take it over;
 * - "covered": the holder took it after the change that triggered this sync was written, so the
 *   holder's reads (made after taking it) already see that change: nothing is left to do;
 * - "wait": the holder may have read the CNF before the change: sync again after it.
 */
export type HeldLeaseDecision = "take" | "covered" | "wait";

export interface HeldLeaseInput {
  readonly lease: Lease;
  readonly now: string;
  /**
   * metadata.resourceVersion of the object whose change triggered this sync, as re-read; undefined
   * when there is none (a resync, a deleted object).
   */
  readonly triggerVersion: string | undefined;
}

const DIGITS = /^\d{1,30}$/;

/**
 * Whether `before` was written before `after`. resourceVersion is opaque by contract; the API
 * server serves etcd's revision, one counter ordered across every object, and the watch cache
 * itself compares them. Anything but two decimal numbers is "unknown" (then: wait, never skip).
 */
export function writtenBefore(before: string, after: string): boolean | undefined {
  if (!DIGITS.test(before) || !DIGITS.test(after)) return undefined;
  return BigInt(before) < BigInt(after);
}

export function decideHeldLease(input: HeldLeaseInput): HeldLeaseDecision {
  const { lease, now, triggerVersion } = input;
  const spec = lease.spec ?? {};
  const renewed = Date.parse(spec.renewTime ?? spec.acquireTime ?? "");
  const seconds = spec.leaseDurationSeconds ?? 0;
  // An unreadable Lease is treated as expired: it must never block syncs for good.
  if (!Number.isFinite(renewed) || renewed + seconds * 1000 <= Date.parse(now)) return "take";
  if (!spec.holderIdentity) return "take";
  const leaseVersion = lease.metadata.resourceVersion;
  if (triggerVersion === undefined || leaseVersion === undefined) return "wait";
  return writtenBefore(triggerVersion, leaseVersion) === true ? "covered" : "wait";
}
