/**
 * Which Exports a clusterlink-export event concerns (its scope planner, pure): an Export event its
 * Export, a Service event the Export named like it (upstream's Export names its Service so), a
 * resync every Export of its scope, with the Services of the namespaces that need one.
 */
import type { IntakeEvent } from "../events/types.js";
import type { ObservedExport } from "./observed.js";

export type ExportTrigger =
  | { readonly kind: "all"; readonly namespace: string | undefined }
  | {
      readonly kind: "one";
      readonly namespace: string;
      readonly name: string;
      /** The Export's own event: a verdict against it is permanent (it cannot fix itself). */
      readonly fromExportEvent: boolean;
    }
  | {
      readonly kind: "malformed";
      readonly code: "UnknownKind" | "MissingNamespace";
      readonly reason: string;
    };

export function exportTriggerFromEvent(event: IntakeEvent): ExportTrigger {
  if (event.type === "resync") return { kind: "all", namespace: event.scope.namespace };
  const { kind, namespace, name } = event.ref;
  if (kind !== "Export" && kind !== "Service") {
    const reason = `clusterlink-export handles Export and Service events, not ${kind}`;
    return { kind: "malformed", code: "UnknownKind", reason };
  }
  if (namespace === "") {
    return {
      kind: "malformed",
      code: "MissingNamespace",
      reason: `${kind} ${name} has no namespace`,
    };
  }
  return { kind: "one", namespace, name, fromExportEvent: kind === "Export" };
}

/** An Export that names a host is checked without a Service. */
export const needsService = (exp: ObservedExport): boolean =>
  !(exp.spec.ok && exp.spec.value.host !== undefined && exp.spec.value.host !== "");

/** The namespaces whose Services a resync lists: those of the Exports that need a Service. */
export const serviceNamespaces = (exports: readonly ObservedExport[]): string[] => [
  ...new Set(exports.filter(needsService).map((e) => e.namespace)),
];
