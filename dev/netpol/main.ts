/**
 * `npm run netpol -- check ...`: see check.ts. Exit 0 allow, 1 deny, 2 usage, 3 API error.
 * `npm run netpol -- demo [namespace]`: see demo.ts. Exit 0, or 3 on an API error.
 */
import { defaultKubeClient } from "../../shared/kube/index.js";
import { checkPacket, formatDecision, parseCheckArgs } from "./check.js";
import { runNetpolDemo } from "./demo.js";

const args = process.argv.slice(2);
if (args[0] === "demo" && args.length <= 2) {
  try {
    for (const line of await runNetpolDemo(defaultKubeClient(), args[1])) console.log(line);
    process.exit(0);
  } catch (error) {
    console.error(`netpol demo: ${(error as Error).message}`);
    process.exit(3);
  }
}
const parsed = parseCheckArgs(args);
if (!parsed.ok) {
  console.error(parsed.message);
  process.exit(2);
}
try {
  const decision = await checkPacket(defaultKubeClient(), parsed.packet);
  console.log(formatDecision(parsed.packet, decision));
  process.exit(decision.allow ? 0 : 1);
} catch (error) {
  console.error(`netpol check: ${(error as Error).message}`);
  process.exit(3);
}
