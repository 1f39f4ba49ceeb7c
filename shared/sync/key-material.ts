/**
 * Every key a CNF could hold while one event is handled (docs/cnf.md#key-material): a CNF may echo
 * any of them in any reply, so every text of the event is redacted against all of them, not only
 * against the keys of the rules the event syncs. A sync of one rule lists the CNF's other
 * key-carrying rules (IpsecSite, IpsecHost; from the API server's watch cache) and reads the
 * Secrets they name, only once a CNF's reply is to become a text (an error): a sync whose calls
 * all succeed costs no look-up. A sync of a whole CNF has them all already.
 */
import { KeyMaterial } from "../core/redact.js";
import { ruleResource, readOptions, type Deployment } from "../kube/index.js";
import { ALL_RULE_KINDS, PURPOSE_LABEL } from "../kinds/index.js";
import { parseRuleObject, type CnfObservation, type ObservedRuleCr } from "./observed.js";
import { keyMaterialOf, type SecretReader } from "./secret-refs.js";
import type { SyncStore } from "./store.js";

const KEY_KINDS = ALL_RULE_KINDS.filter((entry) => entry.carriesKeys);

/** The keys of one event's CNF: those of the synced rules at once, the others when first asked. */
export class CnfKeys {
  private loading: Promise<KeyMaterial> | undefined;
  private loaded: KeyMaterial | undefined;

  constructor(
    private readonly own: KeyMaterial,
    private readonly others: (() => Promise<KeyMaterial>) | undefined,
  ) {}

  /** Every key of the CNF (looked up once); incomplete when the look-up failed. */
  readonly all = (): Promise<KeyMaterial> => {
    this.loading ??= (this.others === undefined ? Promise.resolve(KeyMaterial.NONE) : this.others())
      .catch(() => new KeyMaterial([], false))
      .then((others) => (this.loaded = this.own.with(others)));
    return this.loading;
  };

  /** What is known now: every key once asked for, else the synced rules' own. */
  get current(): KeyMaterial {
    return this.loaded ?? this.own;
  }

  /** The keys to redact the event's results with: every key if a CNF text asked for them. */
  settled(): Promise<KeyMaterial> {
    return this.loading ?? Promise.resolve(this.own);
  }
}

export async function cnfKeys(
  store: SyncStore,
  reader: SecretReader,
  observation: CnfObservation,
  rules: readonly ObservedRuleCr[],
  allRulesOfCnf: boolean,
): Promise<CnfKeys> {
  // Without a CNF no reply can echo a key: no Secret is read (as when resolving references).
  const found = observation.situation.kind === "found";
  const own = await keyMaterialOf(found ? reader : undefined, rules);
  const deployment = observation.deployment;
  const purpose = deployment?.metadata.labels?.[PURPOSE_LABEL];
  if (allRulesOfCnf || deployment === undefined || purpose === undefined) {
    return new CnfKeys(own, undefined);
  }
  return new CnfKeys(own, () => otherKeys(store, reader, deployment, purpose, rules));
}

async function otherKeys(
  store: SyncStore,
  reader: SecretReader,
  deployment: Deployment,
  purpose: string,
  rules: readonly ObservedRuleCr[],
): Promise<KeyMaterial> {
  const uids = new Set(rules.map((r) => (r.ok ? r.cr : r.raw).metadata.uid));
  const lists = await Promise.all(
    KEY_KINDS.map((entry) =>
      store.listRules(ruleResource(entry), {
        namespace: deployment.metadata.namespace ?? "",
        labelSelector: { [PURPOSE_LABEL]: purpose },
        ...readOptions("cached"),
      }),
    ),
  );
  const others = lists.flat().filter((raw) => !uids.has(raw.metadata.uid));
  return keyMaterialOf(reader, others.map(parseRuleObject));
}
