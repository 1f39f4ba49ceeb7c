/**
 * Which Exports a clusterlink-export event concerns (its scope planner, pure): an Export event its
 * Export, a Service event the Export named like it (upstream's Export names its Service so), a
 * resync every Export of its scope, with the Services of the namespaces that need one.
 */
import type { IntakeEvent } from "../events/types.js";
import type { ObservedExport } from "./observed.js";
import { namespacedTrigger, type MalformedTrigger } from "./plan-trigger.js";

export type ExportTrigger =
  | { readonly kind: "all"; readonly namespace: string | undefined }
  | {
      readonly kind: "one";
      readonly namespace: string;
      readonly name: string;
      /** The Export's own event: a verdict against it is permanent (it cannot fix itself). */
      readonly fromExportEvent: boolean;
    }
  | MalformedTrigger;

export function exportTriggerFromEvent(event: IntakeEvent): ExportTrigger {
  if (event.type === "resync") return { kind: "all", namespace: event.scope.namespace };
  const named = namespacedTrigger(event.ref, "clusterlink-export", ["Export", "Service"]);
  if (named.kind === "malformed") return named;
  const { namespace, name } = named;
  return { kind: "one", namespace, name, fromExportEvent: named.kind === "Export" };
}

/** An Export that names a host is checked without a Service. */
export const needsService = (exp: ObservedExport): boolean =>
  !(exp.spec.ok && exp.spec.value.host !== undefined && exp.spec.value.host !== "");

/** The namespaces whose Services a resync lists: those of the Exports that need a Service. */
export const serviceNamespaces = (exports: readonly ObservedExport[]): string[] => [
  ...new Set(exports.filter(needsService).map((e) => e.namespace)),
];
