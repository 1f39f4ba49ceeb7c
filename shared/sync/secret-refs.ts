/**
 * Key material given by reference (e.g. an IpsecSite's `pre_shared_key_secret_ref: {name, key}`):
 * read from the Secret in the rule's namespace when the rule is applied, and put in the plain
 * field of the spec the rest of the sync sees, so conversion (toCnf) and the redaction of status,
 * Events and logs (secretValues) treat it as any key material. The value is never written back.
 *
 * A Secret or key that is missing, or that the function may not read, makes the rule
 * unappliable (Stalled, with which Secret and key, never the value); a failure of the API server
 * is thrown, so the event is retried. A rule being deleted is not resolved: its removal from the
 * CNF needs only its kind and name.
 */
import type { OutcomeCode } from "../core/outcome.js";
import { isKubeError, type KubeObject, type Secret } from "../kube/index.js";
import { KeyMaterial, MIN_KEY_LENGTH } from "../core/redact.js";
import { requireKind, type RuleCr, type SecretKeyRefUse } from "../kinds/index.js";
import type { ObservedRuleCr } from "./observed.js";
import type { SyncStore } from "./store.js";

type SecretLookup =
  { readonly secret: Secret } | { readonly code: OutcomeCode; readonly why: string };

/** Reads each Secret once per event, whatever the number of rules naming it. */
export class SecretReader {
  private readonly cache = new Map<string, Promise<SecretLookup>>();
  constructor(private readonly store: SyncStore) {}

  lookup(namespace: string, name: string): Promise<SecretLookup> {
    const key = `${namespace}/${name}`;
    let found = this.cache.get(key);
    if (found === undefined) {
      found = this.read(namespace, name);
      this.cache.set(key, found);
    }
    return found;
  }

  private async read(namespace: string, name: string): Promise<SecretLookup> {
    try {
      const secret = await this.store.getSecret({ namespace, name });
      if (secret !== undefined) return { secret };
      return { code: "SecretNotFound", why: `Secret ${namespace}/${name} does not exist` };
    } catch (error) {
      if (!isKubeError(error, "forbidden")) throw error;
      const why =
        `the function may not read Secret ${namespace}/${name}: bind the ClusterRole ` +
        `sdewan-rule-secrets to its account in namespace ${namespace} (docs/deploy.md)`;
      return { code: "SecretForbidden", why };
    }
  }
}

/** The value of `ref`, or why there is none (never the value in the reason). */
async function valueOf(
  reader: SecretReader,
  namespace: string,
  ref: SecretKeyRefUse,
): Promise<
  | { readonly value: string; readonly code?: undefined }
  | { readonly code: OutcomeCode; readonly message: string; readonly value?: string }
> {
  const lookup = await reader.lookup(namespace, ref.name);
  const about = `spec.${ref.refField}`;
  if (!("secret" in lookup)) return { code: lookup.code, message: `${about}: ${lookup.why}` };
  const encoded = lookup.secret.data?.[ref.key];
  if (encoded === undefined || encoded === "") {
    const message = `${about}: Secret ${namespace}/${ref.name} has no key ${ref.key} (or it is empty)`;
    return { code: "SecretKeyNotFound", message };
  }
  const value = Buffer.from(encoded, "base64").toString("utf8");
  if (value.length < MIN_KEY_LENGTH) {
    // Never the value, nor its length: a short key could not be kept out of logs and status.
    const message = `${about}: the value of key ${ref.key} of Secret ${namespace}/${ref.name} is shorter than ${MIN_KEY_LENGTH} characters; use a longer key`;
    return { code: "SecretValueTooShort", message, value };
  }
  return { value };
}

const asObject = (cr: RuleCr): KubeObject => ({
  apiVersion: cr.apiVersion,
  kind: cr.kind,
  metadata: cr.metadata,
  spec: cr.spec,
  status: cr.status,
});

async function resolveOne(reader: SecretReader, rule: ObservedRuleCr): Promise<ObservedRuleCr> {
  if (!rule.ok || rule.cr.metadata.deletionTimestamp !== undefined) return rule;
  const refs = requireKind(rule.cr.kind).secretRefs(rule.cr.spec);
  if (refs.length === 0) return rule;
  const namespace = rule.cr.metadata.namespace ?? "";
  const spec: Record<string, unknown> = { ...rule.cr.spec };
  for (const ref of refs) {
    const result = await valueOf(reader, namespace, ref);
    if (result.code !== undefined) {
      return { ok: false, raw: asObject(rule.cr), code: result.code, message: result.message };
    }
    spec[ref.field] = result.value;
    delete spec[ref.refField];
  }
  return { ok: true, cr: { ...rule.cr, spec } };
}

/** `rules` with every Secret reference of a live rule replaced by the value it names. */
export async function resolveSecretRefs(
  reader: SecretReader,
  rules: readonly ObservedRuleCr[],
): Promise<ObservedRuleCr[]> {
  return Promise.all(rules.map((rule) => resolveOne(reader, rule)));
}

/**
 * Every key `rules` could have put on their CNF: plain ones and the values of their Secret
 * references, of deleting rules too (the CNF holds theirs until they are removed). A reference
 * that cannot be read makes the material incomplete when the rule was applied before: the CNF
 * may hold a key we cannot name, so what it says is withheld (KeyMaterial.redactEcho). Without
 * a reader (no CNF to talk to), only the plain keys.
 */
export async function keyMaterialOf(
  reader: SecretReader | undefined,
  rules: readonly ObservedRuleCr[],
): Promise<KeyMaterial> {
  const parts = await Promise.all(
    rules.map(async (rule): Promise<KeyMaterial> => {
      const obj = rule.ok ? rule.cr : rule.raw;
      const entry = requireKind(obj.kind);
      if (!entry.carriesKeys) return KeyMaterial.NONE;
      const plain = entry.secretValues(obj.spec);
      const refs = entry.secretRefs(obj.spec);
      if (refs.length === 0 || reader === undefined) return new KeyMaterial(plain);
      const namespace = obj.metadata.namespace ?? "";
      const values = await Promise.all(refs.map((ref) => valueOf(reader, namespace, ref)));
      const read = values.flatMap((v) => (v.value === undefined ? [] : [v.value]));
      const applied = (obj.status as { appliedGeneration?: unknown } | undefined)
        ?.appliedGeneration;
      const complete = read.length === refs.length || applied === undefined;
      return new KeyMaterial([...plain, ...read], complete);
    }),
  );
  return parts.reduce((all, part) => all.with(part), KeyMaterial.NONE);
}
