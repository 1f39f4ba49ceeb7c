// End to end, as a user runs it: rules written to the real API server reach both pods of CNF
// cnf-1 (simulators) through the connector, the functions' server and the webhook, all child
// processes; and every failure on the way (a CNF restart, a function server killed, a connector
// restart, a watch gone silent) heals without anyone posting an event by hand.
import { newNamespace } from "../integration/support/cluster.js";
import { SAMPLES, UPDATED, samplesConverged, shortName, zone, zonesConverged } from "./samples.js";
import { unloadedServices } from "../../dev/cnf-sim/index.js";
import { E2eWorld, firstPending, waitFor, scenarioIt } from "./world.js";

let world: E2eWorld;
let started: E2eWorld | undefined;
let failed = false;
const timings: Record<string, number> = {};

beforeAll(async () => {
  // The connector's deployment as shipped (stack.yml): restarts paced per burst (ADR 0007).
  started = await E2eWorld.start(await newNamespace("e2e-rule-sync"), {
    functionsEnv: { CNF_RESTART_MIN_INTERVAL_MS: "10000" },
  });
  world = started;
}, 120_000);

afterAll(async () => {
  // Always stop the children; keep their logs when something failed (the path is printed).
  await started?.stop(failed);
  process.stderr.write(`e2e timings (ms): ${JSON.stringify(timings)}\n`);
}, 60_000);

/** An `it` that marks the run failed (logs kept) when it throws. */
const scenario = scenarioIt(() => {
  failed = true;
}, 60_000);

describe("a user's rules reach both CNF pods and report inSync", () => {
  scenario(
    "applying the samples (Mwan3Policy + Mwan3Rule, FirewallZones + FirewallForwarding, IpsecProposal) lands every rule on both pods with inSync status",
    async () => {
      expect(await world.applySamples(SAMPLES)).toBe(6);
      timings["create"] = await waitFor("samples converged", () => samplesConverged(world));
    },
  );

  scenario("a rule naming a policy nobody made is denied by the webhook", async () => {
    await expect(
      world.createRule("Mwan3Rule", "dangling", { policy: "no-such-policy", src_ip: "10.0.9.9" }),
    ).rejects.toThrow(/no-such-policy/);
    expect(await world.rule("Mwan3Rule", "dangling")).toBeUndefined();
  });

  scenario("editing three kinds of rule updates both pods and the applied generation", async () => {
    await world.patchRule("Mwan3Rule", "http-rule", { src_ip: "192.168.1.9" });
    await world.patchRule("FirewallZone", "lan1", { input: "REJECT" });
    await world.patchRule("IpsecProposal", "proposal1", { encryption_algorithm: "aes256" });
    timings["update"] = await waitFor("updates converged", () => samplesConverged(world, UPDATED));
  });

  scenario(
    "a CNF container restart (pod not Ready, CNF empty, Ready again) is healed",
    async () => {
      await world.restartCnfPod(0);
      timings["cnfRestart"] = await waitFor("restarted pod healed", () =>
        samplesConverged(world, UPDATED),
      );
    },
  );

  scenario(
    "deleting rules (dependents first) removes them from both pods, then from the API",
    async () => {
      const from = Date.now();
      await world.deleteRule("Mwan3Rule", "http-rule");
      await world.deleteRule("FirewallForwarding", "lan1-to-wan1");
      await world.deleteRule("IpsecProposal", "proposal1");
      await waitFor("dependents deleted", () =>
        firstPending([
          () => world.pendingDeletion("Mwan3Rule", "http-rule"),
          () => world.pendingDeletion("FirewallForwarding", "lan1-to-wan1"),
          () => world.pendingDeletion("IpsecProposal", "proposal1"),
        ]),
      );
      await world.deleteRule("Mwan3Policy", "balance-1");
      await world.deleteRule("FirewallZone", "wan1");
      await waitFor("the rest deleted", () =>
        firstPending([
          () => world.pendingDeletion("Mwan3Policy", "balance-1"),
          () => world.pendingDeletion("FirewallZone", "wan1"),
        ]),
      );
      timings["delete"] = Date.now() - from;
      // lan1 stays: untouched rules are not collateral.
      expect(await world.pending("FirewallZone", "lan1", UPDATED.lan1)).toBeUndefined();
    },
  );
});

describe("failures on the way heal without a hand-posted event", () => {
  scenario(
    "the function server is SIGKILLed mid-stream and restarted: connector retries and the resync converge every rule",
    async () => {
      const first = Array.from({ length: 6 }, () => shortName("k"));
      const whileDown = Array.from({ length: 3 }, () => shortName("d"));
      const retries = () =>
        world.connectorMetric("sdewan_connector_events_retried_total", { route: "reconcile-rule" });
      const retriesBefore = await retries();
      const resyncsBefore = world.resyncsForwarded();
      world.enableResync(true);
      try {
        // A burst of rules; the server dies while their deliveries are in flight.
        await Promise.all(
          first.map((name) => world.createRule("FirewallZone", name, zone("ACCEPT"))),
        );
        expect(await world.killFunctions()).toBe("SIGKILL");
        const from = Date.now();
        for (const name of whileDown) await world.createRule("FirewallZone", name, zone("ACCEPT"));
        await world.patchRule("FirewallZone", "lan1", { input: "ACCEPT" });
        // The connector keeps trying a server that is not there.
        await waitFor("failed deliveries being retried", async () =>
          (await retries()) > retriesBefore ? undefined : "no retry yet",
        );
        await world.startFunctions();
        timings["functionsDown"] = Date.now() - from;
        timings["functionsKilledHeal"] = await waitFor("rules converged after the kill", () =>
          firstPending([
            () => zonesConverged(world, [...first, ...whileDown], "ACCEPT"),
            () => world.pending("FirewallZone", "lan1", (o) => o["input"] === "ACCEPT"),
          ]),
        );
        // A cold start can outlast the connector's retry budget (12 attempts, 1 s cap here): what
        // it dead-letters, the resync converges. The resync reached the new server.
        timings["deadLettered"] = await world.connectorMetric(
          "sdewan_connector_events_dead_lettered_total",
        );
        await waitFor("a resync forwarded to the new server", () =>
          Promise.resolve(world.resyncsForwarded() > resyncsBefore ? undefined : "no resync yet"),
        );
      } finally {
        world.enableResync(false);
      }
    },
  );

  scenario(
    "rules created, edited and deleted while the connector is down are healed by its initial list",
    async () => {
      const kept = shortName("c");
      const gone = shortName("g");
      const created = shortName("n");
      await world.createRule("FirewallZone", kept, zone("ACCEPT"));
      await world.createRule("FirewallZone", gone, zone("ACCEPT"));
      await waitFor("two zones converged", () => zonesConverged(world, [kept, gone], "ACCEPT"));

      expect(await world.stopConnector()).toBe("exit 0");
      await world.createRule("FirewallZone", created, zone("ACCEPT"));
      await world.patchRule("FirewallZone", kept, { input: "REJECT" });
      await world.deleteRule("FirewallZone", gone);
      // Nobody delivers: the finalizer holds the deleted rule, the new one has no status.
      expect((await world.rule("FirewallZone", gone))?.deleting).toBe(true);
      expect((await world.rule("FirewallZone", created))?.inSync).toBeUndefined();

      const from = Date.now();
      await world.startConnector();
      timings["connectorStart"] = Date.now() - from;
      timings["connectorRestartHeal"] = await waitFor("connector restart healed", () =>
        firstPending([
          () => zonesConverged(world, [created], "ACCEPT"),
          () => zonesConverged(world, [kept], "REJECT"),
          () => world.pendingDeletion("FirewallZone", gone),
        ]),
      );
    },
  );

  scenario(
    "a watch that goes silent (frozen connection, no error) is declared dead and re-listed, delivering the change it never carried",
    async () => {
      const proxy = await world.freezableProxy();
      await world.stopConnector();
      await world.startConnector({ via: proxy, inactivity: "3s" });
      const missed = shortName("m");
      const inactiveRestarts = () =>
        world.connectorMetric("sdewan_connector_watch_restarts_total", {
          route: "reconcile-rule",
          reason: "inactive",
        });
      const restartsBefore = await inactiveRestarts();

      proxy.freezeExisting(); // every open watch now carries nothing, and reports no error
      const frozenAt = Date.now();
      await world.createRule("FirewallZone", missed, zone("ACCEPT"));
      await waitFor("the silenced change delivered", () =>
        zonesConverged(world, [missed], "ACCEPT"),
      );
      timings["silentWatch"] = Date.now() - frozenAt;
      // The frozen watches were declared dead (no error ever came) and listed again.
      await waitFor("watches restarted for inactivity", async () =>
        (await inactiveRestarts()) > restartsBefore ? undefined : "no inactive restart yet",
      );
    },
  );
});

describe("a burst of rule changes restarts each service a few times, not once per rule", () => {
  const BURST = 60;
  /** Restarts of `service` on each pod since `from` (request counts per pod). */
  const restartsSince = (from: readonly number[], service: string) =>
    from.map(
      (n, index) =>
        world
          .cnfRequests(index)
          .slice(n)
          .filter((r) => r.method === "PUT" && r.path.endsWith(`/sdewan/v1/service/${service}`))
          .length,
    );
  const logLengths = () => [0, 1].map((index) => world.cnfRequests(index).length);

  scenario(`${BURST} zones created at once, then deleted at once`, async () => {
    // Distinct by index (60 random short names collide now and then); FirewallZone names are
    // at most 11 characters on the CNF.
    const run = shortName("b");
    const names = Array.from({ length: BURST }, (_, i) => `${run}${i}`);
    let from = logLengths();
    await Promise.all(names.map((name) => world.createRule("FirewallZone", name, zone("ACCEPT"))));
    timings["burstCreate"] = await waitFor("burst converged", () =>
      zonesConverged(world, names, "ACCEPT"),
    );
    const createRestarts = restartsSince(from, "firewall");
    // Every change is loaded: no pod wrote firewall configuration after its last restart.
    expect([0, 1].map((index) => unloadedServices(world.cnfRequests(index)))).toEqual([[], []]);
    from = logLengths();
    await Promise.all(names.map((name) => world.deleteRule("FirewallZone", name)));
    timings["burstDelete"] = await waitFor("burst deleted", () =>
      firstPending(names.map((name) => () => world.pendingDeletion("FirewallZone", name))),
    );
    const deleteRestarts = restartsSince(from, "firewall");
    expect([0, 1].map((index) => unloadedServices(world.cnfRequests(index)))).toEqual([[], []]);
    process.stderr.write(
      `burst of ${BURST}: firewall restarts per pod, create ${createRestarts.join(",")}, delete ${deleteRestarts.join(",")}\n`,
    );
    for (const count of [...createRestarts, ...deleteRestarts]) {
      expect(count).toBeGreaterThan(0);
      expect(count).toBeLessThanOrEqual(3);
    }
  });
});
