/**
 * `npm run netpol -- check ...`: see check.ts. Exit 0 allow, 1 deny, 2 usage, 3 API error,
 * 4 no such namespace, 5 no such Pod, 6 tables not computed yet.
 * `npm run netpol -- check --batch [<file>|-]`: see batch.ts. Exit 0, 2 or 3.
 * `npm run netpol -- demo [namespace]`: see demo.ts. Exit 0, or 3 on an API error.
 * `npm run netpol` runs this file bundled (launch.ts), so a check starts in a fraction of tsx's time.
 */
import { defaultKubeClient } from "../../shared/kube/index.js";
import { linesOf, runBatch } from "./batch.js";
import {
  EXIT_API_ERROR,
  EXIT_CODE,
  EXIT_USAGE,
  batchSource,
  checkPacket,
  formatDecision,
  parseCheckArgs,
} from "./check.js";
import { runNetpolDemo } from "./demo.js";

/**
 * process.exit once stdout has taken every line: writes to a pipe are asynchronous, and an exit
 * before they drain drops the rest (a 10,000-packet batch lost a quarter of its answers).
 */
async function exitAfterOutput(code: number): Promise<never> {
  await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
  process.exit(code);
}

const args = process.argv.slice(2);
if (args[0] === "demo" && args.length <= 2) {
  try {
    for (const line of await runNetpolDemo(defaultKubeClient(), args[1])) console.log(line);
    await exitAfterOutput(0);
  } catch (error) {
    console.error(`netpol demo: ${(error as Error).message}`);
    process.exit(EXIT_API_ERROR);
  }
}
const source = batchSource(args);
if (source !== null) {
  try {
    const lines = linesOf(source);
    await exitAfterOutput(await runBatch(defaultKubeClient(), lines, (line) => console.log(line)));
  } catch (error) {
    // The file cannot be read, or KUBECONFIG cannot: no line was answered.
    console.error(`netpol check --batch: ${(error as Error).message}`);
    process.exit(EXIT_API_ERROR);
  }
}
const parsed = parseCheckArgs(args);
if (!parsed.ok) {
  console.error(parsed.message);
  process.exit(EXIT_USAGE);
}
try {
  const answer = await checkPacket(defaultKubeClient(), parsed.packet);
  console.log(formatDecision(parsed.packet, answer));
  await exitAfterOutput(EXIT_CODE[answer.verdict]);
} catch (error) {
  console.error(`netpol check: ${(error as Error).message}`);
  process.exit(EXIT_API_ERROR);
}
