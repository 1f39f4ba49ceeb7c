/** What every bench row gets: the cluster, the sizes for this run, a work folder and a logger. */
import type { BenchCluster } from "./cluster.js";
import type { CnfFleet } from "../../dev/world/index.js";

export interface Sizes {
  readonly reconcileEvents: number;
  readonly unchangedEvents: number;
  readonly restartRules: number;
  readonly admissionReviews: number;
  readonly admissionThroughputMs: number;
  readonly admissionCreates: number;
  readonly egressPods: number;
  readonly egressNamespaces: number;
  readonly egresses: number;
  readonly egressPodEvents: number;
  /** Pod events stop early (after at least 20) when they take longer than this in total. */
  readonly egressPodEventBudgetMs: number;
  readonly coldStarts: number;
  /** Rules (Mwan3Policies and Mwan3Rules) of the peer rows: ours, upstream's and the floor. */
  readonly peerRules: number;
  /** CNFs (2 pods each) of the fleet rows, one world per size: how each cost grows. */
  readonly fleetCnfs: readonly number[];
  readonly fleetRulesPerCnf: number;
}

export const FULL_SIZES: Sizes = {
  reconcileEvents: 200,
  unchangedEvents: 100,
  restartRules: 1_000,
  admissionReviews: 20_000,
  admissionThroughputMs: 3_000,
  admissionCreates: 200,
  egressPods: 10_000,
  egressNamespaces: 500,
  egresses: 200,
  egressPodEvents: 200,
  egressPodEventBudgetMs: 120_000,
  coldStarts: 3,
  peerRules: 300,
  fleetCnfs: [1, 10, 50],
  fleetRulesPerCnf: 200,
};

export const QUICK_SIZES: Sizes = {
  reconcileEvents: 40,
  unchangedEvents: 20,
  restartRules: 110,
  admissionReviews: 2_000,
  admissionThroughputMs: 1_000,
  admissionCreates: 30,
  egressPods: 500,
  egressNamespaces: 25,
  egresses: 20,
  egressPodEvents: 30,
  egressPodEventBudgetMs: 30_000,
  coldStarts: 1,
  peerRules: 60,
  fleetCnfs: [1, 3],
  fleetRulesPerCnf: 20,
};

export interface BenchContext {
  readonly cluster: BenchCluster;
  readonly fleet: CnfFleet;
  readonly sizes: Sizes;
  readonly quick: boolean;
  /** Scratch folder for function logs and certificates. */
  readonly workDir: string;
  log(line: string): void;
}
