/**
 * clusterlink-authz's one entry: a decision request in (source attributes, the destination
 * export), the live PrivilegedAccessPolicies and the export namespace's AccessPolicies read,
 * and the decision of plan-access.ts out, naming the policy that decided.
 *
 * Request: `{"source": {"client.clusterlink.net/namespace": "app", ...},
 *            "export": {"name": "db", "namespace": "data"}, "destination": {...}}`
 * Reply 200: `{"allowed": false, "action": "deny", "policy": "<default deny>", "tier": "default"}`;
 * 400 for a malformed request; 503 when the policies cannot be read. A policy whose spec does not
 * parse is left out and named in `ignored`.
 */
import * as z from "zod";
import type { Log } from "../core/context.js";
import { clusterLinkResource, isKubeError, type KubeClient } from "../kube/index.js";
import { accessPolicySpecSchema } from "../rules/clusterlink-kinds.js";
import { ATTRIBUTES, decideAccess, type LivePolicy } from "./plan-access.js";

const attributes = z.record(z.string(), z.string());

export const authzRequestSchema = z.object({
  source: attributes,
  export: z.object({ name: z.string().min(1), namespace: z.string().min(1) }),
  destination: attributes.optional(),
});
export type AuthzRequest = z.infer<typeof authzRequestSchema>;

export interface JsonReply {
  readonly status: number;
  readonly body: unknown;
}

const ACCESS_POLICIES = clusterLinkResource("AccessPolicy");
const PRIVILEGED = clusterLinkResource("PrivilegedAccessPolicy");

async function livePolicies(
  kube: KubeClient,
  namespace: string,
): Promise<{ policies: LivePolicy[]; ignored: string[] }> {
  const [privileged, namespaced] = await Promise.all([
    kube.list(PRIVILEGED),
    kube.list(ACCESS_POLICIES, { namespace }),
  ]);
  const policies: LivePolicy[] = [];
  const ignored: string[] = [];
  for (const [objects, isPrivileged] of [
    [privileged, true],
    [namespaced, false],
  ] as const) {
    for (const object of objects) {
      const ns = object.metadata.namespace ?? "";
      const name = isPrivileged ? object.metadata.name : `${ns}/${object.metadata.name}`;
      const spec = accessPolicySpecSchema.safeParse(object.spec);
      if (spec.success)
        policies.push({ name, privileged: isPrivileged, namespace: ns, spec: spec.data });
      else ignored.push(name);
    }
  }
  return { policies, ignored };
}

export async function decideAccessRequest(
  body: unknown,
  kube: KubeClient,
  log: Log,
): Promise<JsonReply> {
  const parsed = authzRequestSchema.safeParse(body);
  if (!parsed.success) {
    const message = parsed.error.issues
      .map((i) => `${i.path.join(".") || "body"}: ${i.message}`)
      .join("; ");
    return { status: 400, body: { error: "bad-request", message } };
  }
  const { source, export: exp, destination = {} } = parsed.data;
  try {
    const { policies, ignored } = await livePolicies(kube, exp.namespace);
    const decision = decideAccess(policies, {
      source,
      destination: {
        ...destination,
        [ATTRIBUTES.exportName]: exp.name,
        [ATTRIBUTES.exportNamespace]: exp.namespace,
      },
      namespace: exp.namespace,
    });
    log.debug({ ...decision, export: `${exp.namespace}/${exp.name}` }, "access decided");
    return {
      status: 200,
      body: {
        allowed: decision.action === "allow",
        ...decision,
        ...(ignored.length > 0 ? { ignored } : {}),
      },
    };
  } catch (error) {
    if (isKubeError(error))
      return { status: 503, body: { error: "unavailable", message: error.message } };
    throw error;
  }
}
