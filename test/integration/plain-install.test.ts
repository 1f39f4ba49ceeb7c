// The plain install and the node fixtures as the API server takes them: every object kustomize
// builds from manifests/plain and test/node/fixtures goes to a real kube-apiserver as
// `kubectl apply --server-side --dry-run=server` sends it (server-side apply, dryRun=All), with
// its defaulting, validation and admission, and is accepted. Nothing is stored, so the shared
// control plane keeps no ClusterRole, Service or webhook configuration of it. Namespaced objects
// go to fresh namespaces standing in for theirs (a dry run cannot create a namespace for them).
import { KubernetesObjectApi, PatchStrategy, type KubernetesObject } from "@kubernetes/client-node";
import { adminKubeConfig, newNamespace } from "./support/cluster.js";
import { describeWithKustomize, kustomizeAvailable, kustomizeBuild } from "../support/kustomize.js";

const FIELD_MANAGER = "sdewan-plain-install-test";

/** Each namespace the objects name, mapped to a fresh one of this test. */
async function standIns(objects: readonly KubernetesObject[]): Promise<Map<string, string>> {
  const names = [...new Set(objects.map((o) => o.metadata?.namespace).filter((n) => n))];
  const fresh = await Promise.all(names.map((n) => newNamespace(`plain-${n}`)));
  return new Map(names.map((n, i) => [n as string, fresh[i] as string]));
}

/** `kubectl apply --server-side --dry-run=server` of one object; the API's refusal, or undefined. */
async function dryRunApply(
  api: KubernetesObjectApi,
  object: KubernetesObject,
): Promise<string | undefined> {
  try {
    await api.patch(object, undefined, "All", FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
    return undefined;
  } catch (error) {
    const body = (error as { body?: unknown }).body;
    return typeof body === "string" ? body : String(error);
  }
}

/** Every object, sent with namespaced ones moved into `namespace` (fixtures: they name none). */
async function refusals(
  objects: readonly KubernetesObject[],
  place: (o: KubernetesObject) => string | undefined,
): Promise<[string, string | undefined][]> {
  const api = KubernetesObjectApi.makeApiClient(adminKubeConfig());
  const answers: [string, string | undefined][] = [];
  for (const object of objects) {
    const namespace = place(object);
    const placed = {
      ...object,
      metadata: { ...object.metadata, ...(namespace === undefined ? {} : { namespace }) },
    };
    answers.push([`${object.kind}/${object.metadata?.name}`, await dryRunApply(api, placed)]);
  }
  return answers;
}

describeWithKustomize()("the API server takes", () => {
  const plain = kustomizeAvailable ? kustomizeBuild<KubernetesObject>("manifests/plain") : [];
  const fixtures = kustomizeAvailable ? kustomizeBuild<KubernetesObject>("test/node/fixtures") : [];

  it("every object of manifests/plain, as kubectl apply -k sends it", async () => {
    const namespaces = await standIns(plain);
    const answers = await refusals(plain, (o) =>
      o.metadata?.namespace === undefined ? undefined : namespaces.get(o.metadata.namespace),
    );
    expect(answers.length).toBeGreaterThan(60);
    expect(answers.filter(([, refusal]) => refusal !== undefined)).toEqual([]);
  });

  it("every object of test/node/fixtures, in the namespace kubectl -n gives them", async () => {
    const namespace = await newNamespace("node-fixtures");
    const answers = await refusals(fixtures, () => namespace);
    expect(answers.map(([object]) => object).sort()).toEqual([
      "Deployment/cnf-1",
      "Deployment/peer-gateway-sim",
      "Service/peer-gateway-sim",
    ]);
    expect(answers.filter(([, refusal]) => refusal !== undefined)).toEqual([]);
  });

  it("and the dry run is a real check: a Deployment of the plain install with a port out of range is refused", async () => {
    const namespace = await newNamespace("plain-refused");
    const deployment = plain.find((o) => o.kind === "Deployment") as KubernetesObject & {
      spec: { template: { spec: { containers: { ports: { containerPort: number }[] }[] } } };
    };
    const broken = structuredClone(deployment);
    const [container] = broken.spec.template.spec.containers;
    if (container?.ports[0] !== undefined) container.ports[0].containerPort = 70_000;
    const [[, refusal]] = (await refusals([broken], () => namespace)) as [[string, string]];
    expect(refusal).toMatch(/containerPort.*must be between 1 and 65535/);
  });
});
