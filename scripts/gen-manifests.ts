/**
 * Writes every manifest generated from the rule registry (`npm run gen:manifests`): the CRDs,
 * the ValidatingWebhookConfiguration, the RBAC roles that name rule kinds, the Knative
 * ApiServerSources and the connector's configuration (scripts/manifests/index.ts lists them).
 * `--check` only reports drift; `--only <group>[,<group>]` limits it to some groups.
 */
import { GENERATED, GENERATED_GROUPS, type GeneratedGroup } from "./manifests/index.js";
import { generate } from "./manifests/write.js";

function groupsFromArgs(args: readonly string[]): GeneratedGroup[] {
  const at = args.indexOf("--only");
  if (at === -1) return [...GENERATED_GROUPS];
  const wanted = (args[at + 1] ?? "").split(",").filter((g) => g !== "");
  const unknown = wanted.filter((g) => !(GENERATED_GROUPS as readonly string[]).includes(g));
  if (wanted.length === 0 || unknown.length > 0) {
    throw new Error(`--only takes some of ${GENERATED_GROUPS.join(", ")}; got "${args[at + 1]}"`);
  }
  return wanted as GeneratedGroup[];
}

const groups = groupsFromArgs(process.argv.slice(2));
process.exitCode = await generate(
  GENERATED.filter((set) => groups.includes(set.group)),
  process.argv.includes("--check"),
);
