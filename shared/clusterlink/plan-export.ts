/**
 * Pure: whether an Export is valid against the Service it names (reference B.4, plus the port
 * check upstream never made), as conditions. Upstream's `ExportValid` keeps its exact strings;
 * Ready/Reconciling/Stalled say the same for tools that read the design proposal's conventions.
 */
import type { Service } from "../core/objects.js";
import type { ObservedExport } from "./observed.js";
import { reconcileConditions, type WantedCondition } from "./plan-status.js";

export type ExportVerdict =
  | { readonly kind: "valid"; readonly port: number | null; readonly note: string }
  | { readonly kind: "invalid"; readonly reason: ExportProblem; readonly message: string };

/** Stalled reasons: each names what the user must fix. */
export type ExportProblem = "InvalidSpec" | "ServiceNotFound" | "PortNotFound" | "PortAmbiguous";

export interface ExportPlan {
  readonly verdict: ExportVerdict;
  readonly conditions: readonly WantedCondition[];
}

const portsOf = (service: Service): number[] => (service.spec?.ports ?? []).map((p) => p.port);

/** The verdict alone: host, Service presence, then the port (given, or the only one). */
export function judgeExport(exp: ObservedExport, service: Service | undefined): ExportVerdict {
  if (!exp.spec.ok) return { kind: "invalid", reason: "InvalidSpec", message: exp.spec.message };
  const { host, port } = exp.spec.value;
  if (host !== undefined && host !== "") {
    return { kind: "valid", port: port ?? null, note: `exports host ${host}` };
  }
  const ref = `${exp.namespace}/${exp.name}`;
  if (service === undefined) {
    return {
      kind: "invalid",
      reason: "ServiceNotFound",
      message: `export service '${ref}' does not exist`,
    };
  }
  return judgePort(ref, portsOf(service), port);
}

/** The port given must be one the Service has; omitted, the Service must have exactly one. */
function judgePort(ref: string, ports: readonly number[], port: number | undefined): ExportVerdict {
  const listed = ports.join(", ");
  if (port !== undefined && port !== 0) {
    // An ExternalName Service may list no ports: there is nothing to check the port against.
    if (ports.length === 0 || ports.includes(port)) {
      return { kind: "valid", port, note: `exports port ${port}` };
    }
    return {
      kind: "invalid",
      reason: "PortNotFound",
      message: `export service '${ref}' has no port ${port} (its ports: ${listed})`,
    };
  }
  const [only] = ports;
  if (ports.length === 1 && only !== undefined) {
    return { kind: "valid", port: only, note: `exports port ${only}, the Service's only port` };
  }
  return {
    kind: "invalid",
    reason: "PortAmbiguous",
    message:
      ports.length === 0
        ? `export service '${ref}' lists no ports: set spec.port`
        : `export service '${ref}' has ports ${listed}: set spec.port to one of them`,
  };
}

export function planExport(exp: ObservedExport, service: Service | undefined): ExportPlan {
  const verdict = judgeExport(exp, service);
  if (verdict.kind === "valid") {
    return {
      verdict,
      conditions: [
        { type: "ExportValid", status: "True", reason: "Verified", message: "" },
        ...reconcileConditions({ kind: "ready", reason: "Verified", message: verdict.note }),
      ],
    };
  }
  return {
    verdict,
    conditions: [
      { type: "ExportValid", status: "False", reason: "Error", message: verdict.message },
      ...reconcileConditions({ kind: "stalled", reason: verdict.reason, message: verdict.message }),
    ],
  };
}
