/**
 * The rule-sync scenario's vocabulary, shared by the e2e files that drive it through different
 * delivery paths (the project's connector, Knative's real ApiServerSource adapter): which samples
 * it applies, when they count as converged, and the small zones it writes and edits.
 */
import { randomBytes } from "node:crypto";
import { firstPending, type E2eWorld } from "./world.js";

/** The sample files the scenario applies, in dependency order. */
export const SAMPLES = [
  "mwan3policy.yaml",
  "mwan3rule.yaml",
  "firewallzone.yaml",
  "firewallforwarding.yaml",
  "ipsecproposal.yaml",
];

export type Held = (o: Record<string, unknown>) => boolean;

/** Why the samples are not yet in sync on both pods (each held object satisfying `held`), or undefined. */
export const samplesConverged = (
  world: E2eWorld,
  held: { "http-rule"?: Held; lan1?: Held; proposal1?: Held } = {},
) =>
  firstPending([
    () => world.pending("Mwan3Policy", "balance-1"),
    () => world.pending("Mwan3Rule", "http-rule", held["http-rule"]),
    () => world.pending("FirewallZone", "lan1", held.lan1),
    () => world.pending("FirewallZone", "wan1"),
    () => world.pending("FirewallForwarding", "lan1-to-wan1"),
    () => world.pending("IpsecProposal", "proposal1", held.proposal1),
  ]);

/** What each pod holds after the scenario's three edits. */
export const UPDATED = {
  "http-rule": (o: Record<string, unknown>) => o["src_ip"] === "192.168.1.9",
  lan1: (o: Record<string, unknown>) => o["input"] === "REJECT",
  proposal1: (o: Record<string, unknown>) => o["encryption_algorithm"] === "aes256",
};

/** Short names: FirewallZone names are at most 11 characters on the CNF. */
export const shortName = (prefix: string): string => `${prefix}${randomBytes(2).toString("hex")}`;

export const zone = (input: "ACCEPT" | "REJECT") => ({
  network: ["ovn-net1"],
  input,
  output: "ACCEPT",
  forward: "ACCEPT",
});

/** Why the zones `names` do not yet hold `input` on both pods, or undefined. */
export const zonesConverged = (
  world: E2eWorld,
  names: readonly string[],
  input: "ACCEPT" | "REJECT",
) =>
  firstPending(
    names.map((name) => () => world.pending("FirewallZone", name, (o) => o["input"] === input)),
  );
