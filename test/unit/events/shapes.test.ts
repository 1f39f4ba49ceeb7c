import { parseIntake, RESYNC_EVENT_TYPE, type IntakeEvent } from "../../../shared/events/index.js";
import { triggerFromEvent } from "../../../shared/egress/index.js";
import { loadEventFixture } from "../../fixtures/events/index.js";

const RULE_API = "batch.sdewan.akraino.org/v1alpha1";
const parseFixture = (name: string): IntakeEvent[] => parseIntake(loadEventFixture(name));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("every accepted event shape becomes IntakeEvents", () => {
  it("binary Reference-mode update -> the referenced object, no object body", () => {
    expect(parseFixture("binary-ref-update")).toEqual([
      {
        type: "object",
        id: "5f0c6a0e-1c4e-4d5a-9a57-8c4a0d1e2f01",
        action: "update",
        ceType: "dev.knative.apiserver.ref.update",
        ref: {
          apiVersion: RULE_API,
          kind: "Mwan3Rule",
          namespace: "sdewan-demo",
          name: "http-rule",
        },
      },
    ]);
  });

  it("binary Resource-mode add -> ref from the object's metadata, object kept as a hint", () => {
    const [event] = parseFixture("binary-resource-add");
    expect(event).toMatchObject({
      type: "object",
      action: "add",
      ceType: "dev.knative.apiserver.resource.add",
      ref: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        namespace: "sdewan-demo",
        name: "cnf-default",
      },
    });
    expect(event?.type === "object" && event.object?.["spec"]).toMatchObject({ replicas: 1 });
  });

  it("binary Reference-mode delete without a body -> ref from the ce-* extensions (cluster-scoped)", () => {
    expect(parseFixture("binary-ref-delete-no-data")).toEqual([
      expect.objectContaining({
        action: "delete",
        ref: {
          apiVersion: "crd.antrea.io/v1beta1",
          kind: "Egress",
          namespace: "",
          name: "egress-web",
        },
      }),
    ]);
  });

  it("a cluster-scoped object as Knative's adapter sends it (empty ce-namespace, '//' in the subject) -> namespace ''", () => {
    expect(parseFixture("binary-ref-update-cluster-scoped")).toEqual([
      expect.objectContaining({
        action: "update",
        ref: {
          apiVersion: "crd.antrea.io/v1beta1",
          kind: "Egress",
          namespace: "",
          name: "egress-web",
        },
      }),
    ]);
    const [event] = parseFixture("binary-ref-update-cluster-scoped");
    expect(event && triggerFromEvent(event)).toEqual({
      ok: true,
      trigger: { kind: "egress", name: "egress-web" },
    });
  });

  it("structured mode with '; charset=utf-8' -> the same ref as binary mode", () => {
    expect(parseFixture("structured-ref-add")).toEqual([
      {
        type: "object",
        id: "c2a4e6f8-0a1b-4c3d-8e5f-7a9b1c3d5e05",
        action: "add",
        ceType: "dev.knative.apiserver.ref.add",
        ref: { apiVersion: RULE_API, kind: "FirewallZone", namespace: "sdewan-demo", name: "lan" },
      },
    ]);
  });

  it.each(["charset=UTF-8", 'charset="utf-8"', " charset = utf-8 "])(
    "structured mode accepts Content-Type parameter %j",
    (parameter) => {
      const { body } = loadEventFixture("structured-ref-add");
      const headers = { "content-type": `Application/CloudEvents+JSON;${parameter}` };
      expect(parseIntake({ headers, body })).toHaveLength(1);
    },
  );

  it("structured Resource-mode update -> ref of a core-group object (apiVersion v1)", () => {
    const [event] = parseFixture("structured-resource-update");
    expect(event).toMatchObject({
      action: "update",
      ref: {
        apiVersion: "v1",
        kind: "Pod",
        namespace: "sdewan-demo",
        name: "cnf-default-7d9c8b6f5-x2k4q",
      },
      object: { status: { podIP: "127.0.0.11" } },
    });
  });

  it("batch mode -> one IntakeEvent per element, in order", () => {
    expect(parseFixture("batch")).toEqual([
      expect.objectContaining({
        id: "batch-1",
        action: "update",
        ref: {
          apiVersion: RULE_API,
          kind: "Mwan3Policy",
          namespace: "sdewan-demo",
          name: "balance",
        },
      }),
      expect.objectContaining({
        id: "batch-2",
        action: "delete",
        ref: {
          apiVersion: RULE_API,
          kind: "Mwan3Rule",
          namespace: "sdewan-demo",
          name: "http-rule",
        },
      }),
      {
        type: "resync",
        id: "batch-3",
        ceType: RESYNC_EVENT_TYPE,
        scope: { namespace: "sdewan-demo" },
      },
    ]);
  });

  it("an empty batch is nothing to do", () => {
    const headers = { "content-type": "application/cloudevents-batch+json" };
    expect(parseIntake({ headers, body: "[]" })).toEqual([]);
  });

  it("our resync type -> a resync scoped to namespace and purpose", () => {
    expect(parseFixture("binary-resync")).toEqual([
      {
        type: "resync",
        id: "resync-2026-11-21T10:05:00Z",
        ceType: RESYNC_EVENT_TYPE,
        scope: { namespace: "sdewan-demo", purpose: "base" },
      },
    ]);
  });

  it("Knative PingSource's type carries the same data and is a resync", () => {
    expect(parseFixture("binary-ping")).toEqual([
      expect.objectContaining({
        type: "resync",
        ceType: "dev.knative.sources.ping",
        scope: { namespace: "sdewan-demo" },
      }),
    ]);
  });

  it("a PingSource without data resyncs every namespace", () => {
    const { headers } = loadEventFixture("binary-ping");
    const { "content-type": _omitted, ...withoutBodyType } = headers;
    expect(parseIntake({ headers: withoutBodyType, body: "" })).toEqual([
      expect.objectContaining({ type: "resync", scope: {} }),
    ]);
  });

  it("a plain JSON ref -> an update of that object with a generated id", () => {
    const [event] = parseFixture("plain-ref");
    expect(event?.id).toMatch(UUID);
    expect(event).toEqual({
      type: "object",
      id: event?.id,
      action: "update",
      ref: { apiVersion: RULE_API, kind: "Mwan3Rule", namespace: "sdewan-demo", name: "http-rule" },
    });
  });

  it("a plain ref without apiVersion or namespace -> apiVersion '' (resolve by kind), cluster-scoped", () => {
    expect(parseFixture("plain-ref-cluster-scoped")).toEqual([
      expect.objectContaining({
        action: "delete",
        ref: { apiVersion: "", kind: "Egress", namespace: "", name: "egress-web" },
      }),
    ]);
  });

  it("a whole object as `kubectl get -o json` prints it works as a plain ref", () => {
    const { body } = loadEventFixture("binary-resource-add");
    expect(parseIntake({ headers: { "content-type": "application/json" }, body })).toEqual([
      expect.objectContaining({
        ref: {
          apiVersion: "apps/v1",
          kind: "Deployment",
          namespace: "sdewan-demo",
          name: "cnf-default",
        },
      }),
    ]);
  });

  it("data wins over extensions when both name the object", () => {
    const { headers, body } = loadEventFixture("binary-ref-update");
    const [event] = parseIntake({ headers: { ...headers, "ce-name": "stale-name" }, body });
    expect(event).toMatchObject({ ref: { name: "http-rule" } });
  });

  it("percent-encoded ce-* header values are decoded once", () => {
    const { headers } = loadEventFixture("binary-ref-delete-no-data");
    const [event] = parseIntake({
      headers: { ...headers, "ce-name": "egress%2Dweb" },
      body: undefined,
    });
    expect(event).toMatchObject({ ref: { name: "egress-web" } });
  });

  it("a binary event without ce-id still gets an id (for logs only)", () => {
    const { "ce-id": _omitted, ...headers } = loadEventFixture("binary-ref-update").headers;
    const [event] = parseIntake({ headers, body: loadEventFixture("binary-ref-update").body });
    expect(event?.id).toMatch(UUID);
  });

  it("structured data_base64 holding JSON is read like data", () => {
    const data = Buffer.from(JSON.stringify({ namespace: "ns1" })).toString("base64");
    const body = JSON.stringify({
      specversion: "1.0",
      id: "b64",
      source: "s",
      type: RESYNC_EVENT_TYPE,
      data_base64: data,
    });
    const [event] = parseIntake({
      headers: { "content-type": "application/cloudevents+json" },
      body,
    });
    expect(event).toMatchObject({ type: "resync", scope: { namespace: "ns1" } });
  });

  it("accepts the body as a Buffer, as the runtime passes it", () => {
    const { headers, body } = loadEventFixture("plain-ref");
    expect(parseIntake({ headers, body: Buffer.from(body) })).toHaveLength(1);
  });
});
