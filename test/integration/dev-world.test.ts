// dev/world's pod restarts, which the bench and the soak rely on outside CI: a container restart
// keeps the pod (same object, same IP) and loses the CNF's state; the API shows not Ready while
// it is down and Ready again after.
import { CnfFleet, type Cnf, type CnfPod } from "../../dev/world/index.js";
import { createKubeClient, PODS } from "../../shared/kube/index.js";
import { requireKind } from "../../shared/kinds/index.js";
import { adminKubeConfig, newNamespace } from "./support/cluster.js";

const ZONES = requireKind("FirewallZone").cnf;

describe("dev/world: a CNF pod restart", () => {
  let fleet: CnfFleet;
  let cnf: Cnf;

  beforeEach(async () => {
    fleet = new CnfFleet(createKubeClient(adminKubeConfig()), { namespace: await newNamespace() });
    cnf = await fleet.createCnf("restart", { pods: 2 });
  });
  afterEach(() => fleet.close());

  const podInApi = async (pod: CnfPod) => {
    const object = await fleet.kube.get(PODS, { namespace: pod.namespace, name: pod.name });
    const ready = object?.status?.conditions?.find((c) => c.type === "Ready")?.status;
    return { uid: object?.metadata.uid, ip: object?.status?.podIP, ready };
  };

  it("crashPod empties the CNF and turns the pod not Ready; restartPod brings the same pod back Ready, empty", async () => {
    const [pod, other] = cnf.pods as [CnfPod, CnfPod];
    const zone = { name: "lan", network: ["net0"], input: "ACCEPT", output: "ACCEPT" };
    for (const p of cnf.pods) await fleet.cnfClient(p).create(ZONES, zone);
    const before = await podInApi(pod);
    expect(before).toMatchObject({ ip: pod.ip, ready: "True" });

    await fleet.crashPod(pod);
    expect(await podInApi(pod)).toEqual({ ...before, ready: "False" });
    expect(fleet.holdings(cnf)).toEqual([{}, { "firewall/zones": ["lan"] }]);

    await fleet.restartPod(other);
    expect(await podInApi(other)).toMatchObject({ ip: other.ip, ready: "True" });
    expect(fleet.holdings(cnf)).toEqual([{}, {}]);
    await fleet.setPodReady(pod, true);
    expect(await podInApi(pod)).toEqual(before);
  });
});
