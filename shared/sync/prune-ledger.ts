/**
 * The prune ledger of a CNF, stored on its Deployment as the annotation LEDGER_ANNOTATION: the
 * CNF objects this controller applied, one "module/collection/name" a line. It lives and dies
 * with the CNF, and losing it (someone replaces the Deployment's metadata) only means pruning
 * less. Kept only for CNFs that opt in to pruning; plan-prune.ts decides what goes in and out.
 * Why here and not in a ConfigMap: docs/adr/0001-prune-only-what-we-applied.md.
 */
import {
  DEPLOYMENTS,
  isKubeError,
  retryOnConflict,
  type Deployment,
  type KubeClient,
} from "../kube/index.js";
import {
  applyLedgerChange,
  formatLedger,
  parseLedger,
  type CnfObjectId,
  type LedgerChange,
} from "./plan-prune.js";

export const LEDGER_ANNOTATION = "sdewan.akraino.org/applied-objects";
const ATTEMPTS = 3;

/** The ledger of an observed Deployment (no extra read). */
export function ledgerOf(deployment: Deployment): CnfObjectId[] {
  return parseLedger(deployment.metadata.annotations?.[LEDGER_ANNOTATION]);
}

const keyOf = (deployment: Deployment) => ({
  namespace: deployment.metadata.namespace ?? "",
  name: deployment.metadata.name,
});

/**
 * Applies `change` to the ledger of `deployment` (as observed in this sync). The patch carries
 * the resourceVersion it was computed from, so a concurrent sync of the same CNF loses nothing:
 * on a conflict, re-read and merge again. Writes nothing when the ledger would not change; an
 * empty ledger is written on first sight, so an operator can see pruning is on.
 */
export async function updateLedger(
  kube: KubeClient,
  deployment: Deployment,
  change: LedgerChange,
): Promise<void> {
  try {
    await retryOnConflict({ attempts: ATTEMPTS, jitterMs: 0 }, async (attempt) => {
      const current = attempt === 1 ? deployment : await kube.get(DEPLOYMENTS, keyOf(deployment));
      if (current === undefined) return;
      const stored = current.metadata.annotations?.[LEDGER_ANNOTATION];
      const text = formatLedger(applyLedgerChange(parseLedger(stored), change));
      if (stored !== undefined && text === formatLedger(parseLedger(stored))) return;
      const patch = {
        metadata: {
          resourceVersion: current.metadata.resourceVersion,
          annotations: { [LEDGER_ANNOTATION]: text },
        },
      };
      await kube.mergePatch(DEPLOYMENTS, keyOf(current), patch);
    });
  } catch (error) {
    // Gone meanwhile: so is its ledger, and nothing is left to prune.
    if (!isKubeError(error, "notFound")) throw error;
  }
}
