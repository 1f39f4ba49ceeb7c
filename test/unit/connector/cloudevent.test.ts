import {
  apiServerEventType,
  apiServerSubject,
  guessPlural,
  toBinaryMessage,
  type CloudEventOptions,
} from "../../../connector/cloudevent.js";
import type { PendingEvent } from "../../../connector/pending-event.js";
import { parseIntake, RESYNC_EVENT_TYPE } from "../../../shared/events/index.js";

const options: CloudEventOptions = {
  mode: "Reference",
  source: "https://127.0.0.1:6443",
  resyncSource: "/sdewan-connector/routes/fn",
  time: new Date("2026-01-02T03:04:05.000Z"),
};

const rule = {
  apiVersion: "batch.sdewan.akraino.org/v1alpha1",
  kind: "Mwan3Policy",
  namespace: "ns1",
  name: "p1",
};

describe("ApiServerSource type strings", () => {
  it.each([
    ["add", "Reference", "dev.knative.apiserver.ref.add"],
    ["update", "Reference", "dev.knative.apiserver.ref.update"],
    ["delete", "Reference", "dev.knative.apiserver.ref.delete"],
    ["add", "Resource", "dev.knative.apiserver.resource.add"],
    ["update", "Resource", "dev.knative.apiserver.resource.update"],
    ["delete", "Resource", "dev.knative.apiserver.resource.delete"],
  ] as const)("%s in %s mode is %s", (action, mode, type) => {
    expect(apiServerEventType(action, mode)).toBe(type);
  });
});

describe("subject: Knative's synthesized self-link", () => {
  it.each([
    ["Pod", "pods"],
    ["Mwan3Policy", "mwan3policies"],
    ["Ingress", "ingresses"],
    ["Endpoints", "endpoints"],
    ["CNFService", "cnfservices"],
    ["IpsecProposal", "ipsecproposals"],
  ])("guesses the plural of %s as %s", (kind, plural) => {
    expect(guessPlural(kind)).toBe(plural);
  });

  it.each([
    [
      { apiVersion: "v1", kind: "Pod", namespace: "ns1", name: "a" },
      "/apis/v1/namespaces/ns1/pods/a",
    ],
    [rule, "/apis/batch.sdewan.akraino.org/v1alpha1/namespaces/ns1/mwan3policies/p1"],
    [
      { apiVersion: "v1", kind: "Namespace", namespace: "", name: "ns1" },
      "/apis/v1/namespaces//namespaces/ns1",
    ],
    [
      { apiVersion: "crd.antrea.io", kind: "Egress", namespace: "", name: "e" },
      "/apis/crd.antrea.io/versionUnknown/namespaces//egresses/e",
    ],
  ])("%j -> %s", (ref, subject) => {
    expect(apiServerSubject(ref)).toBe(subject);
  });
});

describe("toBinaryMessage", () => {
  const added: PendingEvent = { route: "fn", action: "add", ref: rule, id: "id-1" };

  it("writes the headers ApiServerSource writes in Reference mode", () => {
    const message = toBinaryMessage(added, options);
    expect(message.headers).toEqual({
      "content-type": "application/json",
      "ce-specversion": "1.0",
      "ce-id": "id-1",
      "ce-type": "dev.knative.apiserver.ref.add",
      "ce-source": "https://127.0.0.1:6443",
      "ce-subject": "/apis/batch.sdewan.akraino.org/v1alpha1/namespaces/ns1/mwan3policies/p1",
      "ce-time": "2026-01-02T03:04:05.000Z",
      "ce-kind": "Mwan3Policy",
      "ce-apiversion": "batch.sdewan.akraino.org/v1alpha1",
      "ce-name": "p1",
      "ce-namespace": "ns1",
    });
    expect(JSON.parse(message.body)).toEqual({
      kind: "Mwan3Policy",
      namespace: "ns1",
      name: "p1",
      apiVersion: "batch.sdewan.akraino.org/v1alpha1",
    });
  });

  it("omits the namespace from the reference of a cluster-scoped object, but keeps the empty extension", () => {
    const ns: PendingEvent = {
      route: "fn",
      action: "delete",
      ref: { apiVersion: "v1", kind: "Namespace", namespace: "", name: "ns1" },
      id: "id-2",
    };
    const message = toBinaryMessage(ns, options);
    expect(JSON.parse(message.body)).toEqual({ kind: "Namespace", name: "ns1", apiVersion: "v1" });
    expect(message.headers["ce-namespace"]).toBe("");
  });

  it("sends the object itself in Resource mode", () => {
    const object = {
      apiVersion: rule.apiVersion,
      kind: rule.kind,
      metadata: { name: "p1", namespace: "ns1" },
      spec: { x: 1 },
    };
    const message = toBinaryMessage(
      { ...added, action: "update", object },
      { ...options, mode: "Resource" },
    );
    expect(message.headers["ce-type"]).toBe("dev.knative.apiserver.resource.update");
    expect(JSON.parse(message.body)).toEqual(object);
  });

  it("sends the resync event with empty data (every namespace)", () => {
    const message = toBinaryMessage({ route: "fn", action: "resync", id: "id-3" }, options);
    expect(message.headers).toMatchObject({
      "ce-type": RESYNC_EVENT_TYPE,
      "ce-source": "/sdewan-connector/routes/fn",
      "content-type": "application/json",
    });
    expect(message.headers["ce-subject"]).toBeUndefined();
    expect(JSON.parse(message.body)).toEqual({});
  });

  it("is read by the functions' own intake as the same object, action and id", () => {
    const parsed = parseIntake(toBinaryMessage({ ...added, action: "delete" }, options));
    expect(parsed).toEqual([
      expect.objectContaining({ type: "object", id: "id-1", action: "delete", ref: rule }),
    ]);
    const resync = parseIntake(
      toBinaryMessage({ route: "fn", action: "resync", id: "r" }, options),
    );
    expect(resync).toEqual([expect.objectContaining({ type: "resync", id: "r", scope: {} })]);
  });
});
