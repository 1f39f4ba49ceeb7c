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
import {
  SECRETS,
  isKubeError,
  type KubeClient,
  type KubeObject,
  type Secret,
} from "../kube/index.js";
import { requireKind, type RuleCr, type SecretKeyRefUse } from "../rules/index.js";
import type { ObservedRuleCr } from "./observed.js";

type SecretLookup = { readonly secret: Secret } | { readonly code: string; readonly why: string };

/** Reads each Secret once per call, whatever the number of rules naming it. */
class SecretReader {
  private readonly cache = new Map<string, Promise<SecretLookup>>();
  constructor(private readonly kube: KubeClient) {}

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
      const secret = await this.kube.get(SECRETS, { namespace, name });
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
): Promise<{ readonly value: string } | { readonly code: string; readonly message: string }> {
  const lookup = await reader.lookup(namespace, ref.name);
  const about = `spec.${ref.refField}`;
  if (!("secret" in lookup)) return { code: lookup.code, message: `${about}: ${lookup.why}` };
  const encoded = lookup.secret.data?.[ref.key];
  if (encoded === undefined || encoded === "") {
    const message = `${about}: Secret ${namespace}/${ref.name} has no key ${ref.key} (or it is empty)`;
    return { code: "SecretKeyNotFound", message };
  }
  return { value: Buffer.from(encoded, "base64").toString("utf8") };
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
    if (!("value" in result)) return { ok: false, raw: asObject(rule.cr), ...result };
    spec[ref.field] = result.value;
    delete spec[ref.refField];
  }
  return { ok: true, cr: { ...rule.cr, spec } };
}

/** `rules` with every Secret reference of a live rule replaced by the value it names. */
export async function resolveSecretRefs(
  kube: KubeClient,
  rules: readonly ObservedRuleCr[],
): Promise<ObservedRuleCr[]> {
  const reader = new SecretReader(kube);
  return Promise.all(rules.map((rule) => resolveOne(reader, rule)));
}
