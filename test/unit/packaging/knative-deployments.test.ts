// manifests/knative-deployments, Knative Eventing without Serving, as `kubectl apply -k` would
// install it (kustomize's own output): no Knative Serving object and no reference to one is left
// (a cluster without Serving refuses the one and never resolves the other: the Broker then stays
// NoAddress, found on the node); each Trigger is the shipped one but for the kind of Service its
// refs name, and reaches the plain Deployment that serves its function at its path; the Broker's
// and Triggers' dead letters reach a running sink; the functions are manifests/plain's own.
import { Broker } from "@kubernetes-models/knative/eventing.knative.dev/v1/Broker";
import { Trigger } from "@kubernetes-models/knative/eventing.knative.dev/v1/Trigger";
import { ApiServerSource } from "@kubernetes-models/knative/sources.knative.dev/v1/ApiServerSource";
import { PingSource } from "@kubernetes-models/knative/sources.knative.dev/v1/PingSource";
import { FUNCTION_CATALOG } from "../../../functions/catalog.js";
import { KUBERNETES_MODELS } from "./kubernetes-models.js";
import { at, docsOfFolder, ofKind, type Doc } from "./repo-files.js";
import {
  describeWithKustomize,
  kustomizeAvailable,
  kustomizeBuild,
} from "../../support/kustomize.js";

const MODELS: Readonly<Record<string, new (data: never) => { validate(): void }>> = {
  ...KUBERNETES_MODELS,
  Broker,
  Trigger,
  ApiServerSource,
  PingSource,
};

interface Ref {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}
interface PodSpec {
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  containers: { env?: { name: string; value?: string }[]; ports?: { name?: string }[] }[];
}

const named = (d: Doc): string => `${d.kind} ${d.metadata?.namespace ?? ""}/${d.metadata?.name}`;
const podSpec = (d: Doc): PodSpec => at(d, "spec", "template", "spec") as PodSpec;
const functionOf = (d: Doc): string | undefined =>
  podSpec(d).containers[0]?.env?.find((e) => e.name === "FUNCTIONS")?.value;

/** Every `ref` (a Destination's) anywhere in `value`, with where it was found. */
function refsIn(value: unknown, where = ""): [string, Ref][] {
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) =>
    k === "ref" && typeof v === "object" && v !== null && "kind" in v
      ? [[`${where}.${k}`, v as Ref] as [string, Ref]]
      : refsIn(v, `${where}.${k}`),
  );
}

/** The object a ref names in `docs`, or undefined (namespace: the referrer's when unset). */
function resolve(docs: readonly Doc[], from: Doc, ref: Ref): Doc | undefined {
  const namespace = ref.namespace ?? from.metadata?.namespace;
  return docs.find(
    (d) =>
      d.apiVersion === ref.apiVersion &&
      d.kind === ref.kind &&
      d.metadata?.name === ref.name &&
      d.metadata?.namespace === namespace,
  );
}

/** The Deployments a core Service's selector picks, and whether it serves port 80. */
function behind(docs: readonly Doc[], service: Doc): Doc[] {
  const selector = at(service, "spec", "selector") as Record<string, string>;
  return ofKind(docs, "Deployment").filter((d) => {
    const labels = at(d, "spec", "template", "metadata", "labels") as Record<string, string>;
    return Object.entries(selector).every(([k, v]) => labels[k] === v);
  });
}

/** An object with the apiVersion of every ref set aside: the one thing the overlay changes. */
function withoutRefKinds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutRefKinds);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) =>
      k === "ref" ? [k, { ...(v as Ref), apiVersion: "<ref>" }] : [k, withoutRefKinds(v)],
    ),
  );
}

describeWithKustomize()("manifests/knative-deployments as kustomize builds it", () => {
  const docs = kustomizeAvailable ? kustomizeBuild<Doc>("manifests/knative-deployments") : [];
  const shipped = docsOfFolder("manifests/knative");
  const plain = kustomizeAvailable ? kustomizeBuild<Doc>("manifests/plain") : [];

  it.each(docs.map((d) => [named(d), d] as const))("%s validates against its schema", (_, doc) => {
    const Model = MODELS[doc.kind ?? ""];
    expect([named(doc), Model !== undefined]).toEqual([named(doc), true]);
    expect(() => new (Model as NonNullable<typeof Model>)(doc as never).validate()).not.toThrow();
  });

  it("holds no Knative Serving object, and nothing refers to one", () => {
    expect(docs.filter((d) => d.apiVersion?.startsWith("serving.knative.dev/")).map(named)).toEqual(
      [],
    );
    const toServing = docs.flatMap((d) =>
      refsIn(d)
        .filter(([, ref]) => ref.apiVersion.startsWith("serving.knative.dev/"))
        .map(([where]) => `${named(d)} ${where}`),
    );
    expect(toServing).toEqual([]);
  });

  it("keeps the shipped Broker, sources and Triggers but for the kind of Service their refs name", () => {
    for (const kind of ["Broker", "Trigger", "ApiServerSource", "PingSource"]) {
      const byName = (from: readonly Doc[]) =>
        ofKind(from, kind)
          .sort((a, b) => named(a).localeCompare(named(b)))
          .map(withoutRefKinds);
      const [ours, theirs] = [byName(docs), byName(shipped)];
      expect([kind, ours]).toEqual([kind, theirs]);
    }
  });

  it("resolves every ref of an Eventing object to an object it installs", () => {
    const eventing = docs.filter((d) => /knative\.dev\//.test(d.apiVersion ?? ""));
    expect(eventing.length).toBeGreaterThanOrEqual(20);
    for (const d of eventing) {
      for (const [where, ref] of refsIn(d)) {
        expect([`${named(d)} ${where}`, resolve(docs, d, ref) !== undefined]).toEqual([
          `${named(d)} ${where}`,
          true,
        ]);
      }
    }
  });

  it("sends each Trigger's events to the Deployment serving its function, at its path, on port 80", () => {
    for (const trigger of ofKind(docs, "Trigger")) {
      const subscriber = at(trigger, "spec", "subscriber") as { ref: Ref; uri: string };
      const service = resolve(docs, trigger, subscriber.ref) as Doc;
      const ports = at(service, "spec", "ports") as { port: number }[];
      // Knative resolves a core Service to http://<name>.<namespace>.svc.cluster.local (port 80).
      expect([named(trigger), ports.some((p) => p.port === 80)]).toEqual([named(trigger), true]);
      const served = behind(docs, service).map(functionOf);
      expect([named(trigger), served]).toEqual([named(trigger), [subscriber.ref.name]]);
      expect([named(trigger), subscriber.uri]).toEqual([named(trigger), `/${subscriber.ref.name}`]);
    }
  });

  it("dead-letters to a plain Service in front of a running sink, from the Broker and every Trigger that had one", () => {
    const sinks = [...ofKind(docs, "Broker"), ...ofKind(docs, "Trigger")].flatMap((d) => {
      const ref = at(d, "spec", "delivery", "deadLetterSink", "ref") as Ref | undefined;
      return ref === undefined ? [] : [resolve(docs, d, ref)];
    });
    const hadOne = [...ofKind(shipped, "Broker"), ...ofKind(shipped, "Trigger")].filter(
      (d) => at(d, "spec", "delivery", "deadLetterSink") !== undefined,
    );
    expect(sinks).toHaveLength(hadOne.length);
    expect(new Set(sinks.map((s) => (s === undefined ? "missing" : named(s))))).toEqual(
      new Set(["Service sdewan-system/sdewan-dead-letter"]),
    );
    const sink = sinks[0] as Doc;
    const [deployment, ...others] = behind(docs, sink);
    expect(others).toEqual([]);
    expect(podSpec(deployment as Doc).automountServiceAccountToken).toBe(false);
    const targetPort = (at(sink, "spec", "ports") as { port: number; targetPort: string }[])[0];
    expect(targetPort?.port).toBe(80);
    expect(podSpec(deployment as Doc).containers[0]?.ports?.map((p) => p.name)).toContain(
      targetPort?.targetPort,
    );
  });

  it("runs the functions as manifests/plain does: the same Deployments and Services", () => {
    const functions = (from: readonly Doc[]) =>
      [...ofKind(from, "Deployment"), ...ofKind(from, "Service")]
        .filter((d) => FUNCTION_CATALOG.some((f) => f.name === d.metadata?.name))
        .filter((d) => d.metadata?.name !== "validate-admission");
    const ours = functions(docs);
    expect(ours.length).toBe(2 * (FUNCTION_CATALOG.length - 1));
    expect(ours).toEqual(functions(plain));
  });

  it("runs every Pod as an account it creates (the sink with none)", () => {
    const accounts = new Set(
      ofKind(docs, "ServiceAccount").map((a) => `${a.metadata?.namespace}/${a.metadata?.name}`),
    );
    for (const d of [...ofKind(docs, "Deployment"), ...ofKind(docs, "DaemonSet")]) {
      const account = podSpec(d).serviceAccountName;
      if (d.metadata?.name === "sdewan-dead-letter") {
        expect(account).toBeUndefined();
        continue;
      }
      expect([named(d), accounts.has(`${d.metadata?.namespace}/${account}`)]).toEqual([
        named(d),
        true,
      ]);
    }
  });
});
