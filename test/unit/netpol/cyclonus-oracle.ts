// The cyclonus oracle binary (dev/netpol-oracle/cyclonus) and what its traffic format needs,
// shared by the generated-world comparison and the run of cyclonus's own generated cases.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import type {
  RefPacket,
  RefPod,
  RefPolicy,
  RefWorld,
} from "../../../dev/netpol-oracle/reference.js";
import { inCi } from "../../support/in-ci.js";

const repoRoot = path.resolve(import.meta.dirname, "../../..");
export const binary =
  process.env["NETPOL_CYCLONUS"] ??
  execFileSync(
    "bash",
    [path.join(repoRoot, "dev/netpol-oracle/build-cyclonus.sh"), "--print-path"],
    {
      encoding: "utf8",
    },
  )
    .trim()
    .split("\n")
    .pop() ??
  "";
export const available = binary !== "" && existsSync(binary);
export { inCi };
if (!available && !inCi) {
  console.warn("cyclonus comparison SKIPPED: run `npm run netpol:cyclonus:build`");
}

/** As the API server stores it: policyTypes defaulted (cyclonus's builder needs them). */
export function defaulted(policy: RefPolicy): RefPolicy {
  const given = policy.spec.policyTypes ?? [];
  const policyTypes =
    given.length > 0
      ? given
      : (policy.spec.egress ?? []).length > 0
        ? ["Ingress", "Egress"]
        : ["Ingress"];
  return { ...policy, spec: { ...policy.spec, policyTypes } };
}

export function trafficPeer(world: RefWorld, ip: string, pod: RefPod | null) {
  if (pod === null) return { ip, internal: null };
  const ns = world.namespaces.find((n) => n.metadata.name === pod.metadata.namespace);
  return {
    ip,
    internal: {
      namespace: pod.metadata.namespace,
      podLabels: pod.metadata.labels ?? {},
      namespaceLabels: ns?.metadata.labels ?? {},
    },
  };
}

/** The name the destination Pod gives the packet's port and protocol, as cyclonus wants it. */
export function portName(destination: RefPod | null, packet: RefPacket): string {
  for (const c of destination?.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      if (p.containerPort === packet.port && (p.protocol ?? "TCP") === packet.protocol && p.name)
        return p.name;
    }
  }
  return "";
}
