// How the node scenario runs `cyclonus generate` (test/node/netpol-cyclonus.test.ts) and reads
// what it reports: its JUnit file (one test case per generated case, a failure element when it
// failed) and its summary table (per step and try: connections wrong, right, ignored).

/** cyclonus's own default exclusions (pkg/cli/generate.go), plus SCTP: this kernel has none. */
export const DEFAULT_EXCLUDE = [
  "multi-peer",
  "upstream-e2e",
  "example",
  "end-port",
  "namespaces-by-default-label",
  "sctp",
];

/**
 * The cases CI runs (about a minute each on this machine): the policy targets and every action
 * (a policy created, updated, deleted; a namespace or Pod created, relabelled, deleted), which
 * are the cases that go through network-policy-sync's Pod and Namespace paths and the agent's
 * incremental loads. `SDEWAN_CYCLONUS_INCLUDE=all`: every case but the excluded (~1.5-2 h).
 */
export const DEFAULT_INCLUDE = ["target-pod-selector", "action"];

/**
 * The arguments: TCP and UDP servers on 80 and 81 (SCTP cannot run here), connections to each
 * Pod's IP (cyclonus v0.5.6 keeps no Service IP for a Pod it creates or relabels mid-case, so
 * `service-ip` probes those Pods at ":80", the prober itself; `service-name` needs DNS, and the
 * node's CoreDNS answers on 1053 behind the Service's 53, which the DNS egress rules cyclonus
 * adds do not allow), loopback left out (not specified by Kubernetes; on a bridge it never meets
 * the packet filter). SDEWAN_CYCLONUS_INCLUDE / SDEWAN_CYCLONUS_EXCLUDE (comma-separated tags)
 * choose the cases; SDEWAN_CYCLONUS_DESTINATION overrides where connections go.
 */
export function cyclonusArgs(agnhostRegistry: string, env: NodeJS.ProcessEnv): string[] {
  const include = env["SDEWAN_CYCLONUS_INCLUDE"] ?? DEFAULT_INCLUDE.join(",");
  const exclude = env["SDEWAN_CYCLONUS_EXCLUDE"] ?? DEFAULT_EXCLUDE.join(",");
  return [
    "generate",
    "--server-protocol=TCP,UDP",
    "--server-port=80,81",
    `--destination-type=${env["SDEWAN_CYCLONUS_DESTINATION"] ?? "pod-ip"}`,
    "--ignore-loopback",
    `--image-registry=${agnhostRegistry}`,
    "--pod-creation-timeout-seconds=300",
    "--perturbation-wait-seconds=3",
    "--job-timeout-seconds=2",
    "--retries=1",
    ...(include === "all" ? [] : [`--include=${include}`]),
    `--exclude=${exclude}`,
  ];
}

export interface CyclonusCase {
  readonly name: string;
  readonly passed: boolean;
}

export interface CyclonusRun {
  readonly cases: readonly CyclonusCase[];
  /** Pod pairs of each step's last try, as cyclonus's summary table counts them. */
  readonly wrong: number;
  readonly right: number;
  readonly ignored: number;
  /** Connections (port and protocol of a pair) of those tries: as expected / probed. */
  readonly tcp: { readonly same: number; readonly probed: number };
  readonly udp: { readonly same: number; readonly probed: number };
}

const ENTITIES: Record<string, string> = {
  "&amp;": "&",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&#34;": '"',
  "&apos;": "'",
  "&#39;": "'",
};
const unescapeXml = (s: string): string =>
  s.replace(/&(amp|lt|gt|quot|apos|#34|#39);/g, (m) => ENTITIES[m] ?? m);

/** "120 / 144 (83%)" -> 120 of 144; "-" (a protocol not probed) -> 0 of 0. */
function fraction(cell: string | undefined): { same: number; probed: number } {
  const m = /(\d+) \/ (\d+)/.exec(cell ?? "");
  return { same: Number(m?.[1] ?? 0), probed: Number(m?.[2] ?? 0) };
}

/** Reads cyclonus's stdout (its summary table) and its JUnit file. */
export function parseCyclonusRun(log: string, junit: string): CyclonusRun {
  const cases = [
    ...junit.matchAll(/<testcase\b[^>]*\bname="([^"]*)"[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g),
  ].map((m) => ({
    name: unescapeXml(m[1] ?? ""),
    passed: !/<failure\b/.test(m[3] ?? ""),
  }));
  const steps = [
    ...log.matchAll(
      /\|\s*Step (\d+), try (\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|([^|]*)\|[^|]*\|([^|]*)\|/g,
    ),
  ].map((m) => ({
    step: Number(m[1]),
    attempt: Number(m[2]),
    wrong: Number(m[3]),
    right: Number(m[4]),
    ignored: Number(m[5]),
    tcp: fraction(m[6]),
    udp: fraction(m[7]),
  }));
  let wrong = 0;
  let right = 0;
  let ignored = 0;
  const tcp = { same: 0, probed: 0 };
  const udp = { same: 0, probed: 0 };
  steps.forEach((row, i) => {
    const next = steps[i + 1];
    if (next !== undefined && next.step === row.step && next.attempt === row.attempt + 1) return;
    wrong += row.wrong;
    right += row.right;
    ignored += row.ignored;
    tcp.same += row.tcp.same;
    tcp.probed += row.tcp.probed;
    udp.same += row.udp.same;
    udp.probed += row.udp.probed;
  });
  return { cases, wrong, right, ignored, tcp, udp };
}
