/**
 * Process entry of the NetworkPolicy node agent DaemonSet (manifests/netpol-agent/daemonset.yaml):
 * `node dist/functions/netpol-node-agent/main.js`. Settings from the environment (agent.ts).
 * Exit codes: 0 after SIGTERM/SIGINT (the packet filter keeps the last ruleset), 1 on a crash,
 * 2 on bad settings.
 */
import { pino } from "pino";
import { loadKubeConfig } from "../../shared/kube/config.js";
import { AgentConfigError, RunningNodeAgent, agentConfigFromEnv } from "./agent.js";

const logger = pino({
  level: process.env["LOG_LEVEL"] ?? "info",
  base: { component: "netpol-node-agent" },
  timestamp: pino.stdTimeFunctions.isoTime,
});

async function main(): Promise<void> {
  const config = agentConfigFromEnv(process.env);
  const agent = await RunningNodeAgent.start(config, { kubeConfig: loadKubeConfig(), logger });
  const onSignal = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, "stopping; the packet filter keeps the ruleset last loaded");
    agent.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
}

main().catch((error: unknown) => {
  if (error instanceof AgentConfigError) {
    logger.error({ code: error.code }, error.message);
    process.exitCode = 2;
    return;
  }
  logger.error({ err: error }, "netpol node agent crashed");
  process.exitCode = 1;
});
