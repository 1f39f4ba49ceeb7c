/**
 * Policy clusterlink-spec on ClusterLink's kinds (clusterlink.net): the spec passes the CRD's own
 * schema and what the schema cannot say. Peer: at least one gateway. Import: a name its Services
 * can take (a DNS-1035 label, checked on CREATE: names never change), at least one source, port
 * 1-65535, targetPort 0 (lease one) or in [1024, 49152). Export: port 1-65535 when given.
 * AccessPolicy and PrivilegedAccessPolicy: every from/to item names exactly one of workloadSets
 * and workloadSelector, and the selector is valid. Checked on CREATE and on spec-changing
 * UPDATEs only, so a controller's metadata or status write is never blocked.
 */
import type * as z from "zod";
import {
  accessPolicySpecSchema,
  compileWorkloadItem,
  exportSpecSchema,
  importNameProblem,
  importSpecSchema,
  peerSpecSchema,
  type AccessPolicySpec,
  type ExportSpec,
  type ImportSpec,
  type PeerSpec,
} from "../kinds/clusterlink.js";
import { describeObject } from "./objects.js";
import { specChecksApply } from "./plan-rule.js";
import type { AdmissionRequest } from "./review.js";
import { POLICY, allow, deny, type Verdict } from "./verdict.js";

/** Upstream's port lease range (reference B.3). */
const LEASE_MIN = 1024;
const LEASE_END = 49152;

const portProblem = (field: string, port: number | undefined): string[] =>
  port !== undefined && (port < 1 || port > 65535) ? [`${field} ${port} is not in 1-65535`] : [];

function peerProblems(spec: PeerSpec): string[] {
  const none = spec.gateways.length === 0 ? ["spec.gateways is empty"] : [];
  return [
    ...none,
    ...spec.gateways.flatMap((g, i) => portProblem(`spec.gateways[${i}].port`, g.port)),
  ];
}

function importProblems(spec: ImportSpec): string[] {
  const target = spec.targetPort ?? 0;
  return [
    ...((spec.sources ?? []).length === 0 ? ["spec.sources is empty"] : []),
    ...portProblem("spec.port", spec.port),
    ...(target !== 0 && (target < LEASE_MIN || target >= LEASE_END)
      ? [`spec.targetPort ${target} is not 0 and not in [${LEASE_MIN}, ${LEASE_END})`]
      : []),
  ];
}

function accessProblems(spec: AccessPolicySpec): string[] {
  return (["from", "to"] as const).flatMap((side) =>
    spec[side].flatMap((item, i) => {
      const compiled = compileWorkloadItem(item, `spec.${side}[${i}]`);
      return compiled.kind === "invalid" ? compiled.problems : [];
    }),
  );
}

interface KindCheck<T> {
  readonly schema: z.ZodType<T>;
  readonly problems: (spec: T) => string[];
  /** Why metadata.name cannot work, or null; checked on CREATE only. */
  readonly nameProblem?: (name: string) => string | null;
  readonly fix: string;
}

const check = <T>(c: KindCheck<T>): KindCheck<unknown> => c as KindCheck<unknown>;

const CHECKS: Readonly<Record<string, KindCheck<unknown>>> = {
  Peer: check({
    schema: peerSpecSchema,
    problems: peerProblems,
    fix: "list at least one gateway as {host, port}",
  }),
  Export: check({
    schema: exportSpecSchema,
    problems: (s: ExportSpec) => portProblem("spec.port", s.port),
    fix: "set spec.port to a port of the Service (1-65535), or omit it for a single-port Service",
  }),
  Import: check({
    schema: importSpecSchema,
    problems: importProblems,
    nameProblem: importNameProblem,
    fix: "name it with a DNS-1035 label, list at least one source {peer, exportName, exportNamespace}, set spec.port in 1-65535, and leave spec.targetPort 0 to have one leased",
  }),
  AccessPolicy: check({
    schema: accessPolicySpecSchema,
    problems: accessProblems,
    fix: "give every from/to item a workloadSelector (workloadSets are not supported)",
  }),
  PrivilegedAccessPolicy: check({
    schema: accessPolicySpecSchema,
    problems: accessProblems,
    fix: "give every from/to item a workloadSelector (workloadSets are not supported)",
  }),
};

export const CLUSTERLINK_ADMISSION_KINDS: readonly string[] = Object.keys(CHECKS);

export function planClusterLinkSpec(request: AdmissionRequest): Verdict {
  const kindCheck = CHECKS[request.kind.kind];
  if (kindCheck === undefined || !specChecksApply(request)) return allow();
  const parsed = kindCheck.schema.safeParse(request.object?.spec);
  const specProblems = parsed.success
    ? kindCheck.problems(parsed.data)
    : parsed.error.issues.map(
        (i) => `spec${i.path.map((p) => `.${String(p)}`).join("")}: ${i.message}`,
      );
  const name = request.operation === "CREATE" ? request.object?.metadata.name : undefined;
  const nameProblem = name === undefined ? null : (kindCheck.nameProblem?.(name) ?? null);
  const problems =
    nameProblem === null ? specProblems : [`metadata.name: ${nameProblem}`, ...specProblems];
  if (problems.length === 0) return allow();
  return deny(
    POLICY.clusterLinkSpec,
    422,
    `${describeObject(request)} is invalid: ${problems.join("; ")}`,
    kindCheck.fix,
  );
}
