// The world of the node scenarios (test/node): one real node (dev/node) per file, with the audit
// log of our identities; the install steps themselves are dev/node/install.ts (the demo's too).
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { auditArgs } from "../../../dev/demo/at-rest.js";
import { type InstalledWorld, progress, setProgress, worldOf } from "../../../dev/node/install.js";
import { startNode } from "../../../dev/node/node.js";

export * from "../../../dev/node/install.js";
export { waitFor } from "../../e2e/world.js";

const started = Date.now();
setProgress((line) =>
  process.stderr.write(`[node e2e ${((Date.now() - started) / 1000).toFixed(1)} s] ${line}\n`),
);

export async function startInstalledWorld(): Promise<InstalledWorld> {
  const auditDir = await mkdtemp(path.join(os.tmpdir(), "sdewan-node-audit-"));
  const scratch = await mkdtemp(path.join(os.tmpdir(), "sdewan-node-user-"));
  const node = await startNode({
    log: progress,
    extraApiserverArgs: await auditArgs(auditDir),
  });
  return worldOf(node, scratch, auditDir);
}
