/**
 * Network name -> pod interface name, from the CNF Deployment's ovn4nfv annotation
 * (`k8s.plugin.opnfv.org/nfn-network` on the pod template), as upstream's net2iface did.
 */
import * as z from "zod";
import { RuleError } from "./errors.js";

export const NFN_NETWORK_ANNOTATION = "k8s.plugin.opnfv.org/nfn-network";

/** Read-only map from a Kubernetes network name (e.g. `ovn-net1`) to a pod interface (`net1`). */
export type NetworkInterfaceMap = ReadonlyMap<string, string>;

export const EMPTY_NETWORK_MAP: NetworkInterfaceMap = new Map();

const nfnNetworkSchema = z.looseObject({
  type: z.string().optional(),
  interface: z.array(
    z.looseObject({
      name: z.string().min(1),
      interface: z.string().min(1),
      defaultGateway: z.string().optional(),
    }),
  ),
});

/**
 * Parses the annotation's JSON. An absent annotation gives an empty map (any network lookup then
 * fails with NetworkNotMapped); invalid JSON or a shape without `interface[]` throws
 * RuleError("InvalidNetworkAnnotation"); a network listed twice with different interfaces too.
 */
export function parseNfnNetworkAnnotation(value: string | undefined): NetworkInterfaceMap {
  if (value === undefined || value.trim() === "") return EMPTY_NETWORK_MAP;
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch (cause) {
    throw new RuleError("InvalidNetworkAnnotation", `${NFN_NETWORK_ANNOTATION} is not valid JSON`, {
      cause,
    });
  }
  const parsed = nfnNetworkSchema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where =
      first === undefined ? "" : ` at ${first.path.join(".") || "(root)"}: ${first.message}`;
    throw new RuleError(
      "InvalidNetworkAnnotation",
      `${NFN_NETWORK_ANNOTATION} must be {"interface":[{"name","interface"}...]}${where}`,
    );
  }
  const map = new Map<string, string>();
  for (const entry of parsed.data.interface) {
    const seen = map.get(entry.name);
    if (seen !== undefined && seen !== entry.interface) {
      throw new RuleError(
        "InvalidNetworkAnnotation",
        `${NFN_NETWORK_ANNOTATION} maps network ${entry.name} to both ${seen} and ${entry.interface}`,
      );
    }
    map.set(entry.name, entry.interface);
  }
  return map;
}

/** The structural slice of an apps/v1 Deployment that carries the annotation (no client types here). */
export interface DeploymentWithTemplateAnnotations {
  readonly spec?: {
    readonly template?: {
      readonly metadata?: { readonly annotations?: Readonly<Record<string, string>> };
    };
  };
}

/** The network map of a CNF Deployment, read from its pod template's annotation. */
export function networkMapOfDeployment(
  deployment: DeploymentWithTemplateAnnotations,
): NetworkInterfaceMap {
  return parseNfnNetworkAnnotation(
    deployment.spec?.template?.metadata?.annotations?.[NFN_NETWORK_ANNOTATION],
  );
}
