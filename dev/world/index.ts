/**
 * dev/world: the one fake CNF world of the integration and e2e tests, the demo, the bench and the
 * soak. It owns CNFs on a real API server as a Deployment controller and a kubelet would leave
 * them (a Deployment, its ReplicaSets, Pods whose status says Running at a Pod IP, Ready or not)
 * and one CNF simulator (dev/cnf-sim) per pod, listening on the Pod IP (its own 127.x.y.z address)
 * at the CNF's port; and the manifests/samples documents. Pods never run: readiness, restarts
 * and deletions happen when a caller asks. It does not own the control plane, namespaces, rule
 * CRs or the functions, and it imports no test framework: plain tsx programs use it too.
 *
 *   const fleet = new CnfFleet(createKubeClient(kc), { namespace });
 *   const cnf = await fleet.createCnf("cnf-1", { pods: 2 }); // Deployment cnf-cnf-1, 2 Ready pods
 *   ... deliver events to the functions ...
 *   await fleet.restartPod(cnf.pods[0]!); // its CNF comes back empty; not Ready, then Ready
 *   fleet.holdings(cnf); // [{}, { "mwan3/policies": ["balance1"] }]
 *   await fleet.close(); // stops the simulators
 */
export {
  CNF_NETWORKS,
  CnfFleet,
  loopbackAddress,
  withFreshAddress,
  type Cnf,
  type CnfPod,
  type CreateCnfOptions,
  type FleetOptions,
  type PodEndpointFactory,
  type SimOptions,
} from "./fleet.js";
export {
  holdingsOf,
  sampleDocuments,
  sampleFiles,
  sampleRule,
  sampleRules,
  type SampleDocument,
  type SampleRule,
} from "./samples.js";
