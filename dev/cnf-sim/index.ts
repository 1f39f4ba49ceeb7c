/**
 * cnf-sim: a simulator of the upstream SD-EWAN OpenWrt CNF REST API (LuCI, /cgi-bin/luci/) for
 * tests and the demo. It owns the API's observable behaviour at the DESIGN snapshot (reference
 * sdewan-upstream.md 2.1-2.4, 3.3): sysauth login, the 6/7-segment URI rule, status codes, error
 * bodies, per-kind validation and dependency errors, the service restart endpoint, the web
 * server's front page at / (what a readiness probe asks); plus a control API under /_sim/ (faults,
 * refused connections, CNF restart, counters, state, service actions).
 * It does not run iptables, mwan3 or strongSwan, and it is not imported by production code.
 *
 *   const sim = await startCnfSim({ host: "127.0.0.2", port: 0 });
 *   sim.failNext({ kind: "status", status: 500, collection: "mwan3/policies", count: 2 });
 *   ... drive the controller against sim.url ...
 *   expect(sim.counters().collections["mwan3/policies"]?.writes).toBe(1);
 *   await sim.close();
 */
export { startCnfSim, type CnfSim, type CnfSimOptions, type SimState } from "./server.js";
export {
  simFaultSchema,
  totalWrites,
  type CollectionCounters,
  type SimCounters,
  type SimFault,
  type SimFaultInput,
  type SimRequestRecord,
} from "./control.js";
export {
  fakeClusterDns,
  RESTARTABLE_SERVICES,
  type RestartableService,
  type ServiceAction,
  type ServiceResolver,
} from "./services.js";
export { unloadedServices } from "./loaded.js";
