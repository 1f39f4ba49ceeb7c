/**
 * The prune ledger of a CNF on the API server: a ConfigMap "<deployment>-sdewan-ledger" in the
 * CNF's namespace, owned by the Deployment (so it goes when the CNF goes), whose data key
 * `objects` lists the CNF objects this controller applied, one "module/collection/name" a line.
 * Kept only for CNFs that opt in to pruning (plan-prune.ts decides what goes in and out).
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import {
  isKubeError,
  kubeObjectSchema,
  type Deployment,
  type KubeClient,
  type ResourceType,
} from "../kube/index.js";
import {
  applyLedgerChange,
  formatLedger,
  parseLedger,
  type CnfObjectId,
  type LedgerChange,
} from "./plan-prune.js";

const configMapSchema = kubeObjectSchema.extend({
  data: z.record(z.string(), z.string()).optional(),
});
type ConfigMap = z.infer<typeof configMapSchema>;

export const CONFIG_MAPS: ResourceType<ConfigMap> = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
  statusSubresource: false,
  schema: configMapSchema,
};

export const LEDGER_DATA_KEY = "objects";
export const LEDGER_LABEL = "sdewan.akraino.org/prune-ledger-of";
const LEDGER_SUFFIX = "-sdewan-ledger";
const MAX_NAME = 253;
const ATTEMPTS = 3;

/** "<deployment>-sdewan-ledger", or a hashed name when that would exceed the name limit. */
export function ledgerName(deployment: string): string {
  const name = `${deployment}${LEDGER_SUFFIX}`;
  if (name.length <= MAX_NAME) return name;
  const hash = createHash("sha256").update(deployment).digest("hex").slice(0, 10);
  return `${deployment.slice(0, MAX_NAME - LEDGER_SUFFIX.length - 11)}-${hash}${LEDGER_SUFFIX}`;
}

const keyOf = (deployment: Deployment) => ({
  namespace: deployment.metadata.namespace ?? "",
  name: ledgerName(deployment.metadata.name),
});

/** A ledger as read: its objects, and the ConfigMap (undefined before the first write). */
export interface StoredLedger {
  readonly objects: readonly CnfObjectId[];
  readonly configMap: ConfigMap | undefined;
}

export async function readLedger(kube: KubeClient, deployment: Deployment): Promise<StoredLedger> {
  const configMap = await kube.get(CONFIG_MAPS, keyOf(deployment));
  return { objects: parseLedger(configMap?.data?.[LEDGER_DATA_KEY]), configMap };
}

function ledgerObject(deployment: Deployment, text: string, resourceVersion?: string) {
  const { name, namespace } = keyOf(deployment);
  return {
    metadata: {
      name,
      namespace,
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
      labels: { [LEDGER_LABEL]: deployment.metadata.name },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          name: deployment.metadata.name,
          uid: deployment.metadata.uid ?? "",
        },
      ],
    },
    data: { [LEDGER_DATA_KEY]: text },
  };
}

/**
 * Applies `change` to the ledger `read` earlier in this sync; writes with the resourceVersion
 * read, so a concurrent sync of the same CNF loses nothing (on a conflict: re-read, merge again).
 * Writes nothing when the ledger would not change; creates it (maybe empty) on first sight, so
 * an operator can see pruning is on.
 */
export async function updateLedger(
  kube: KubeClient,
  deployment: Deployment,
  read: StoredLedger,
  change: LedgerChange,
): Promise<void> {
  let current = read.configMap;
  for (let attempt = 1; ; attempt += 1) {
    const before = formatLedger(parseLedger(current?.data?.[LEDGER_DATA_KEY]));
    const text = formatLedger(applyLedgerChange(parseLedger(before), change));
    if (current !== undefined && text === before) return;
    try {
      if (current === undefined) await kube.create(CONFIG_MAPS, ledgerObject(deployment, text));
      else {
        const rv = current.metadata.resourceVersion;
        await kube.replace(CONFIG_MAPS, ledgerObject(deployment, text, rv));
      }
      return;
    } catch (error) {
      if (!isKubeError(error, "conflict") || attempt >= ATTEMPTS) throw error;
      current = await kube.get(CONFIG_MAPS, keyOf(deployment));
    }
  }
}
