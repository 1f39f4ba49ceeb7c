/**
 * Process entry of the webhook Deployment (manifests/webhook/deployment.yaml):
 * HTTPS on PORT (default 8443) with TLS_CERT_FILE / TLS_KEY_FILE (default the mounted Secret).
 */
import { Runtime, closeOnSignals, logProcessFaults, portFrom } from "../../shared/runtime/index.js";
import { kubeAdmissionReader } from "../../shared/admission/index.js";
import { defaultKubeClient } from "../../shared/kube/index.js";
import { serveValidateAdmission } from "./serve.js";

const env = process.env;
const runtime = new Runtime({ defaultMetrics: true });
logProcessFaults(runtime.logger);

const server = await serveValidateAdmission({
  runtime,
  // Created now, so a missing KUBECONFIG / service account fails the start, not the first review.
  reader: kubeAdmissionReader(defaultKubeClient()),
  port: portFrom(env["PORT"], 8443),
  tls: {
    certFile: env["TLS_CERT_FILE"] ?? "/etc/validate-admission/tls/tls.crt",
    keyFile: env["TLS_KEY_FILE"] ?? "/etc/validate-admission/tls/tls.key",
  },
});
closeOnSignals(server.running, runtime.logger);
runtime.logger.info({ url: server.url }, "validate-admission listening (HTTPS)");
