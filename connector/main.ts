/**
 * CLI: `npm run connector -- --config <file>` (or CONNECTOR_CONFIG=<file>). Kubernetes access
 * comes from KUBECONFIG / ~/.kube/config / the in-cluster ServiceAccount, in that order.
 * Exit codes: 0 after a graceful stop, 1 on a crash or a second signal, 2 on bad configuration.
 */
import { parseArgs } from "node:util";
import { pino } from "pino";
import { loadKubeConfig } from "../shared/kube/config.js";
import { ConfigError, loadConfig } from "./config.js";
import { startConnector } from "./connector.js";

const logger = pino({ level: process.env.LOG_LEVEL ?? "info", base: { component: "connector" } });

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { config: { type: "string", short: "c" } } });
  const path = values.config ?? process.env.CONNECTOR_CONFIG;
  if (path === undefined || path === "") {
    throw new ConfigError("no configuration: pass --config <file> or set CONNECTOR_CONFIG");
  }
  const config = loadConfig(path, process.env);
  const kubeConfig = loadKubeConfig();
  const connector = await startConnector(config, { kubeConfig, logger });

  let signalled = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) {
      logger.warn({ signal }, "second signal: exiting without waiting for deliveries");
      process.exit(1);
    }
    signalled = true;
    logger.info({ signal }, "signal received");
    connector.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    logger.error({ code: error.code }, error.message);
    process.exitCode = 2;
    return;
  }
  logger.error({ err: error }, "connector crashed");
  process.exitCode = 1;
});
