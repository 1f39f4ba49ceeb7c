/**
 * Every key a CNF could hold while one event is handled (docs/cnf.md#key-material): a CNF may echo
 * any of them in any reply, so every text of the event is redacted against all of them, not only
 * against the keys of the rules the event syncs. A sync of one rule lists the CNF's other
 * key-carrying rules (IpsecSite, IpsecHost; from the API server's watch cache) and reads the
 * Secrets they name; a sync of a whole CNF has them all already.
 */
import type { KeyMaterial } from "../core/redact.js";
import { ruleResource, readOptions, type KubeClient } from "../kube/index.js";
import { ALL_RULE_KINDS, PURPOSE_LABEL } from "../rules/index.js";
import { parseRuleObject, type CnfObservation, type ObservedRuleCr } from "./observed.js";
import { keyMaterialOf, type SecretReader } from "./secret-refs.js";

const KEY_KINDS = ALL_RULE_KINDS.filter((entry) => entry.carriesKeys);

export async function cnfKeyMaterial(
  kube: KubeClient,
  reader: SecretReader,
  observation: CnfObservation,
  rules: readonly ObservedRuleCr[],
  allRulesOfCnf: boolean,
): Promise<KeyMaterial> {
  const own = await keyMaterialOf(reader, rules);
  const deployment = observation.deployment;
  const purpose = deployment?.metadata.labels?.[PURPOSE_LABEL];
  if (allRulesOfCnf || deployment === undefined || purpose === undefined) return own;
  const uids = new Set(rules.map((r) => (r.ok ? r.cr : r.raw).metadata.uid));
  const lists = await Promise.all(
    KEY_KINDS.map((entry) =>
      kube.list(ruleResource(entry), {
        namespace: deployment.metadata.namespace ?? "",
        labelSelector: { [PURPOSE_LABEL]: purpose },
        ...readOptions("cached"),
      }),
    ),
  );
  const others = lists.flat().filter((raw) => !uids.has(raw.metadata.uid));
  return own.with(await keyMaterialOf(reader, others.map(parseRuleObject)));
}
