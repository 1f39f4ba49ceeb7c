/**
 * `npm run plan -- -f <file-or-dir> [--delete] [-o json]`: what the functions would do if these
 * objects were applied (or deleted) now, per CNF and pod, in the order they would do it, and the
 * restarts the change costs as one burst (docs/plan.md). Reads only: the API with your kubeconfig
 * (KUBECONFIG), the CNF credentials Secret (CNF_CREDENTIALS_SECRET, default
 * sdewan-system/sdewan-cnf-credentials) if you may get it, and each ready CNF pod with GETs.
 * Exit 0 with the plan, 1 when it could not be made, 2 on a usage error.
 */
import { createKubeClient } from "../../shared/kube/index.js";
import { planTable } from "../../shared/sync/index.js";
import { loadManifests, parsePlanArgs } from "./files.js";
import { planFiles } from "./plan.js";

const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

async function main(): Promise<number> {
  const options = parsePlanArgs(process.argv.slice(2));
  if ("error" in options) {
    process.stderr.write(`${options.error}\n`);
    return 2;
  }
  try {
    const report = await planFiles({
      kube: createKubeClient(),
      env: process.env,
      objects: loadManifests(options.files),
      delete: options.delete,
      namespace: options.namespace,
      log: quiet,
    });
    if (options.output === "json") {
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } else {
      const pacing = `CNF_RESTART_MIN_INTERVAL_MS=${report.pacing.minIntervalMs}, CNF_RESTART_QUIET_MS=${report.pacing.quietMs}`;
      process.stdout.write(planTable(report, pacing));
    }
    return 0;
  } catch (error) {
    process.stderr.write(`plan: ${(error as Error).message}\n`);
    return 1;
  }
}

process.exitCode = await main();
