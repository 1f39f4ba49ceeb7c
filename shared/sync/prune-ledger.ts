/**
 * The prune ledger of a CNF: the CNF objects this controller applied, one
 * "module/collection/name" a line (plan-prune.ts decides what goes in and out). Kept only for
 * CNFs that opt in to pruning, in a ConfigMap of a namespace that holds nothing else
 * (PRUNE_LEDGER_NAMESPACE, default sdewan-prune-ledgers), so the function needs write access
 * to ledgers only, never to workloads. The ConfigMap names the Deployment's uid: a ledger left
 * behind by a deleted CNF is never applied to a new CNF of the same name.
 *
 * Migration: ledgers used to be the Deployment annotation LEDGER_ANNOTATION. While a CNF has no
 * ledger ConfigMap, that annotation is read; the first write copies it into the ConfigMap, after
 * which it is ignored. Why a ConfigMap: docs/adr/0001-prune-only-what-we-applied.md.
 */
import { createHash } from "node:crypto";
import type { Env } from "../cnf/index.js";
import { isKubeError, retryOnConflict, type ConfigMap, type Deployment } from "../kube/index.js";
import {
  applyLedgerChange,
  formatLedger,
  parseLedger,
  type CnfObjectId,
  type LedgerChange,
} from "./plan-prune.js";
import { CNF_NAMESPACE_LABEL } from "./observed.js";
import type { SyncStore } from "./store.js";

/** Where ledgers were kept before they moved to ConfigMaps; read until the first write. */
export const LEDGER_ANNOTATION = "sdewan.akraino.org/applied-objects";
export const DEFAULT_LEDGER_NAMESPACE = "sdewan-prune-ledgers";
/** The ConfigMap key holding the ledger text. */
export const LEDGER_KEY = "applied-objects";
const CNF_DEPLOYMENT_ANNOTATION = "sdewan.akraino.org/cnf-deployment";
const CNF_UID_ANNOTATION = "sdewan.akraino.org/cnf-uid";
const ATTEMPTS = 3;
const MAX_NAME = 253;

/** The namespace of the ledgers: env PRUNE_LEDGER_NAMESPACE, default sdewan-prune-ledgers. */
export function ledgerNamespace(env: Env): string {
  const value = env["PRUNE_LEDGER_NAMESPACE"]?.trim();
  return value === undefined || value === "" ? DEFAULT_LEDGER_NAMESPACE : value;
}

/**
 * "<namespace>.<deployment>": unambiguous (a namespace has no dot) and readable; a hash of it
 * when that would be longer than a ConfigMap name may be.
 */
export function ledgerName(deployment: Deployment): string {
  const plain = `${deployment.metadata.namespace ?? ""}.${deployment.metadata.name}`;
  if (plain.length <= MAX_NAME) return plain;
  return `ledger-${createHash("sha256").update(plain).digest("hex").slice(0, 40)}`;
}

/** A CNF's ledger as read: its entries and the ConfigMap they came from, if any. */
export interface StoredLedger {
  readonly entries: readonly CnfObjectId[];
  /** The ledger ConfigMap, whoever it was written for (see `ours`). */
  readonly configMap: ConfigMap | undefined;
  /** Whether `configMap` was written for this very Deployment (same uid). */
  readonly ours: boolean;
}

/**
 * The ledger of `deployment`: its ConfigMap when one was written for this Deployment, else the
 * Deployment's old annotation (migration), else empty. One GET.
 */
export async function readLedger(
  store: SyncStore,
  namespace: string,
  deployment: Deployment,
): Promise<StoredLedger> {
  const configMap = await store.getConfigMap({ namespace, name: ledgerName(deployment) });
  const uid = configMap?.metadata.annotations?.[CNF_UID_ANNOTATION];
  const ours = configMap !== undefined && uid === deployment.metadata.uid;
  const text = ours
    ? configMap.data?.[LEDGER_KEY]
    : deployment.metadata.annotations?.[LEDGER_ANNOTATION];
  return { entries: parseLedger(text), configMap, ours };
}

function ledgerObject(namespace: string, deployment: Deployment, text: string) {
  return {
    metadata: {
      name: ledgerName(deployment),
      namespace,
      labels: {
        "app.kubernetes.io/part-of": "sdewan",
        [CNF_NAMESPACE_LABEL]: deployment.metadata.namespace ?? "",
      },
      annotations: {
        [CNF_DEPLOYMENT_ANNOTATION]: deployment.metadata.name,
        [CNF_UID_ANNOTATION]: deployment.metadata.uid ?? "",
      },
    },
    data: { [LEDGER_KEY]: text },
  };
}

/**
 * Applies `change` to the ledger of `deployment`, starting from `stored` (read in this sync).
 * The write carries the resourceVersion it was computed from (create: the name), so a concurrent
 * sync of the same CNF loses nothing: on a conflict, re-read and merge again. Writes nothing when
 * the ledger would not change; a CNF's first ledger is written even when empty, so an operator
 * can see pruning is on.
 */
export async function updateLedger(
  store: SyncStore,
  namespace: string,
  deployment: Deployment,
  stored: StoredLedger,
  change: LedgerChange,
): Promise<void> {
  await retryOnConflict({ attempts: ATTEMPTS, jitterMs: 0 }, async (attempt) => {
    const current = attempt === 1 ? stored : await readLedger(store, namespace, deployment);
    const text = formatLedger(applyLedgerChange(current.entries, change));
    if (current.ours && text === formatLedger(current.entries)) return;
    const object = ledgerObject(namespace, deployment, text);
    if (current.configMap === undefined) {
      await store.createConfigMap(object);
      return;
    }
    const { resourceVersion } = current.configMap.metadata;
    await store.replaceConfigMap({
      ...object,
      metadata: { ...object.metadata, resourceVersion },
    });
  });
}

/**
 * Why a ledger could not be kept in a way retrying will not fix (the grant or the namespace is
 * missing), for the warning; undefined for any other failure.
 */
export function ledgerNotKeptReason(error: unknown, namespace: string): string | undefined {
  if (isKubeError(error, "forbidden")) {
    return `grant get, create and update on configmaps in namespace ${namespace}`;
  }
  if (isKubeError(error, "notFound")) return `create namespace ${namespace}`;
  return undefined;
}
