// A bench's own registration of validate-admission, for the namespaces it labels.
import { AdmissionregistrationV1Api } from "@kubernetes/client-node";
import { buildWebhookConfiguration } from "../../shared/admission/webhook-config.js";
import type { BenchCluster } from "./cluster.js";

export interface BenchWebhook {
  /** The label that puts a namespace under this webhook, as `{ [label]: id }`. */
  readonly selector: Readonly<Record<string, string>>;
  /** Removes the registration (best effort: the bench's cluster goes away after it too). */
  remove(): Promise<void>;
}

/** Registers the webhook served at `url` under a fresh name, for namespaces labelled `label=id`. */
export async function registerBenchWebhook(
  cluster: BenchCluster,
  url: string,
  prefix: string,
  label: string,
  id: string,
): Promise<BenchWebhook> {
  const configuration = buildWebhookConfiguration({
    name: `${prefix}-${id}`,
    clientConfig: { url, caBundle: Buffer.from(cluster.plane.caPem).toString("base64") },
    namespaceSelector: { matchLabels: { [label]: id } },
  });
  const registrations = cluster.adminKubeConfig().makeApiClient(AdmissionregistrationV1Api);
  await registrations.createValidatingWebhookConfiguration({ body: configuration });
  return {
    selector: { [label]: id },
    remove: async () => {
      await registrations
        .deleteValidatingWebhookConfiguration({ name: configuration.metadata.name })
        .catch(() => undefined);
    },
  };
}
