/** `npm run netpol -- check ...`: see check.ts. Exit 0 allow, 1 deny, 2 usage, 3 API error. */
import { defaultKubeClient } from "../../shared/kube/index.js";
import { checkPacket, formatDecision, parseCheckArgs } from "./check.js";

const parsed = parseCheckArgs(process.argv.slice(2));
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
