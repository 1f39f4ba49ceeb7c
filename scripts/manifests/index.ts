/**
 * Every manifest generated from the rule registry, by group: `npm run gen:manifests` writes them
 * all (`--check` only reports drift), and test/unit/packaging/generated-manifests.test.ts fails
 * when a committed file differs from what these functions render. Adding a rule kind to the
 * registry and running `npm run gen:manifests` updates every kind list below.
 */
import { renderWebhookManifest } from "../../shared/admission/webhook-config.js";
import { renderCrdFiles } from "../../shared/kinds/crds.js";
import { LOCAL_TARGET, PLAIN_TARGET, renderConnectorConfig } from "./connector-config.js";
import { renderApiServerSources } from "./knative.js";
import { renderMonitoring } from "./monitoring.js";
import {
  renderEventSourcesRbac,
  renderOnDeploymentReadyRbac,
  renderReconcileRuleRbac,
} from "./rbac.js";

export const GENERATED_GROUPS = [
  "crds",
  "webhook",
  "rbac",
  "knative",
  "connector",
  "monitoring",
] as const;
export type GeneratedGroup = (typeof GENERATED_GROUPS)[number];

export interface GeneratedSet {
  readonly group: GeneratedGroup;
  /** A folder (repository-relative) the generator owns whole: files it no longer renders go. */
  readonly ownedDir?: string;
  /** Repository-relative path -> text. */
  readonly render: () => ReadonlyMap<string, string>;
}

const CRD_DIR = "manifests/crds";

export const GENERATED: readonly GeneratedSet[] = [
  {
    group: "crds",
    ownedDir: CRD_DIR,
    render: () =>
      new Map([...renderCrdFiles()].map(([file, text]) => [`${CRD_DIR}/${file}`, text])),
  },
  {
    group: "webhook",
    render: () =>
      new Map([
        ["manifests/webhook/validating-webhook-configuration.yaml", renderWebhookManifest()],
      ]),
  },
  {
    group: "rbac",
    render: () =>
      new Map([
        ["manifests/rbac/reconcile-rule.yaml", renderReconcileRuleRbac()],
        ["manifests/rbac/on-deployment-ready.yaml", renderOnDeploymentReadyRbac()],
        ["manifests/rbac/event-sources.yaml", renderEventSourcesRbac()],
      ]),
  },
  {
    group: "knative",
    render: () => new Map([["manifests/knative/apiserversources.yaml", renderApiServerSources()]]),
  },
  {
    group: "connector",
    render: () =>
      new Map([
        ["manifests/connector/config.yaml", renderConnectorConfig()],
        ["manifests/connector/local.yaml", renderConnectorConfig(undefined, LOCAL_TARGET)],
        ["manifests/plain/connector-config.yaml", renderConnectorConfig(undefined, PLAIN_TARGET)],
      ]),
  },
  {
    group: "monitoring",
    render: renderMonitoring,
  },
];

/** How the committed files differ from what the generator renders. */
export interface Drift {
  /** Files whose text differs, or that are missing. */
  readonly changed: string[];
  /** Files in an owned folder that the generator no longer renders. */
  readonly stale: string[];
}

/** What to read from the work tree (repository-relative paths), so tests and the script agree. */
export interface TreeReader {
  read(path: string): string | undefined;
  /** The *.yaml files of a folder, repository-relative. */
  yamlFiles(dir: string): string[];
}

export function renderAll(sets: readonly GeneratedSet[] = GENERATED): Map<string, string> {
  return new Map(sets.flatMap((set) => [...set.render()]));
}

export function driftOf(tree: TreeReader, sets: readonly GeneratedSet[] = GENERATED): Drift {
  const wanted = renderAll(sets);
  const changed = [...wanted].filter(([file, text]) => tree.read(file) !== text).map(([f]) => f);
  const stale = sets
    .flatMap((set) => (set.ownedDir === undefined ? [] : tree.yamlFiles(set.ownedDir)))
    .filter((file) => !wanted.has(file));
  return { changed, stale };
}

/** The command that rewrites every generated file. */
export const GENERATE_COMMAND = "npm run gen:manifests";
