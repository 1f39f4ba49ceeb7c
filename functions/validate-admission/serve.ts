/**
 * validate-admission as an always-on HTTPS endpoint: the API server only calls webhooks over TLS,
 * so this function serves TLS itself, with the certificate reloaded when its files change.
 */
import type { AdmissionReader } from "../../shared/admission/index.js";
import type { KubeClient } from "../../shared/kube/index.js";
import type { Env } from "../../shared/runtime/deps.js";
import {
  Runtime,
  createFunctionApp,
  startServer,
  type RunningServer,
} from "../../shared/runtime/index.js";
import { createValidateAdmission, validateAdmission } from "./index.js";
import { reloadTlsOnChange, type TlsFiles, type TlsReloader } from "./tls-reload.js";

export interface AdmissionServerOptions {
  readonly tls: TlsFiles;
  /** 0 picks a free port. */
  readonly port: number;
  readonly host?: string;
  readonly runtime?: Runtime;
  /** Default: the process's own identity (in-cluster service account or KUBECONFIG). */
  readonly reader?: AdmissionReader;
  /** The identity a dry run's plan reads with; default: the process's own. */
  readonly kube?: KubeClient;
  /** Settings (CNF_*, CNF_CREDENTIALS_SECRET); default: process.env. */
  readonly env?: Env;
  /** How often the certificate files are checked for changes. Default 2 s. */
  readonly tlsPollMs?: number;
}

export interface AdmissionServer {
  readonly running: RunningServer;
  readonly tls: TlsReloader;
  readonly url: string;
  close(): Promise<void>;
}

export async function serveValidateAdmission(
  options: AdmissionServerOptions,
): Promise<AdmissionServer> {
  const runtime = options.runtime ?? new Runtime();
  const { reader, kube, env } = options;
  const fn =
    reader === undefined && kube === undefined && env === undefined
      ? validateAdmission
      : createValidateAdmission({
          ...(reader === undefined ? {} : { reader: () => reader }),
          ...(kube === undefined ? {} : { kube: () => kube }),
          ...(env === undefined ? {} : { env }),
        });
  const running = await startServer(createFunctionApp(fn, runtime), runtime, {
    port: options.port,
    ...(options.host === undefined ? {} : { host: options.host }),
    tls: options.tls,
  });
  const tls = reloadTlsOnChange(running.server, options.tls, runtime.logger, options.tlsPollMs);
  return {
    running,
    tls,
    url: running.url,
    close: async () => {
      tls.stop();
      await running.close();
    },
  };
}
