// manifests/knative: every object validates against the Knative schemas
// (@kubernetes-models/knative), and the wiring holds together: which Trigger an event reaches
// (filters evaluated here on events shaped like ApiServerSource's and PingSource's), delivery
// with retry + backoff + dead-letter sink (and a budget that outlasts a 10-minute CNF outage), Services that serve what their Triggers
// send, identities that exist in manifests/rbac, and sources that watch what the connector routes.
import { ApiServerSource } from "@kubernetes-models/knative/sources.knative.dev/v1/ApiServerSource";
import { PingSource } from "@kubernetes-models/knative/sources.knative.dev/v1/PingSource";
import { Broker } from "@kubernetes-models/knative/eventing.knative.dev/v1/Broker";
import { Trigger } from "@kubernetes-models/knative/eventing.knative.dev/v1/Trigger";
import { Service } from "@kubernetes-models/knative/serving.knative.dev/v1/Service";
import { ALL_FUNCTIONS } from "../../../functions/all.js";
import { parseIntake } from "../../../shared/events/parse.js";
import { at, docsOfFolder, ofKind, yamlDocs, type Doc } from "./repo-files.js";

const docs = docsOfFolder("manifests/knative");
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  ApiServerSource,
  PingSource,
  Broker,
  Trigger,
  Service,
};
/** Seconds of an ISO 8601 duration as Knative's delivery fields take them (PT0.5S, PT1M30S). */
function isoSeconds(duration: string): number {
  const match = /^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?$/.exec(duration);
  if (match === null) throw new Error(`not an ISO 8601 time duration: ${duration}`);
  return Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0);
}

/** When each attempt of one event is sent, in seconds after the first (0), under `delivery`. */
function retryTimes(delivery: Record<string, unknown>, first: number): number[] {
  const delay = isoSeconds(String(delivery["backoffDelay"]));
  const times = [0];
  for (let n = first; n < first + Number(delivery["retry"]); n += 1) {
    const wait = delivery["backoffPolicy"] === "linear" ? delay * n : delay * 2 ** n;
    times.push((times.at(-1) ?? 0) + wait);
  }
  return times;
}

const EVENT_FUNCTIONS = ALL_FUNCTIONS.filter((fn) => fn.kind === "event").map((fn) => fn.name);

type Filter = Record<string, unknown>;
type Attributes = Record<string, string>;

/** The Subscriptions API dialects our Triggers use: exact, prefix, any (filters are ANDed). */
function matches(filter: Filter, event: Attributes): boolean {
  const [[dialect, value]] = Object.entries(filter) as [[string, unknown]];
  if (dialect === "any") return (value as Filter[]).some((f) => matches(f, event));
  if (dialect === "all") return (value as Filter[]).every((f) => matches(f, event));
  const [[attribute, expected]] = Object.entries(value as Record<string, string>) as [
    [string, string],
  ];
  const actual = event[attribute];
  if (actual === undefined) return false;
  if (dialect === "exact") return actual === expected;
  if (dialect === "prefix") return actual.startsWith(expected);
  throw new Error(`filter dialect ${dialect} is not evaluated by this test`);
}

const triggers = ofKind(docs, "Trigger");
const receivers = (event: Attributes): string[] =>
  triggers
    .filter((t) => (at(t, "spec", "filters") as Filter[]).every((f) => matches(f, event)))
    .map((t) => at(t, "spec", "subscriber", "ref", "name") as string)
    .sort();

/**
 * An event as ApiServerSource sends it, with the source's ceOverrides. Both modes set the same
 * extensions (kind, apiversion, name, namespace); only the type differs (`ref.` or `resource.`).
 */
function apiServerEvent(
  sourceName: string,
  apiVersion: string,
  kind: string,
  mode: "ref" | "resource" = "ref",
): Attributes {
  const source = ofKind(docs, "ApiServerSource").find((s) => s.metadata?.name === sourceName);
  const overrides = at(source, "spec", "ceOverrides", "extensions") as Attributes;
  return {
    type: `dev.knative.apiserver.${mode}.update`,
    apiversion: apiVersion,
    kind,
    ...overrides,
  };
}

const pingEvent = (pingName = "sdewan-resync"): Attributes => {
  const ping = ofKind(docs, "PingSource").find((p) => p.metadata?.name === pingName);
  const { name, namespace } = ping?.metadata ?? {};
  return {
    type: "dev.knative.sources.ping",
    source: `/apis/v1/namespaces/${namespace}/pingsources/${name}`,
  };
};

describe("manifests/knative", () => {
  it.each(docs.map((d) => [`${d.kind} ${d.metadata?.name}`, d] as const))(
    "%s validates against the Knative schema",
    (_, doc) => {
      const Model = MODELS[doc.kind ?? ""];
      expect(Model).toBeDefined();
      expect(() => new (Model as NonNullable<typeof Model>)(doc as never).validate()).not.toThrow();
    },
  );

  it("the schema check is real: a Trigger with a non-integer retry is refused", () => {
    const bad = {
      ...triggers[0],
      spec: { ...(triggers[0]?.["spec"] as object), delivery: { retry: "x" } },
    };
    expect(() => new Trigger(bad as never).validate()).toThrow(/retry/);
  });

  it.each([
    [
      "a rule (Mwan3Rule)",
      "sdewan-cnf",
      "batch.sdewan.akraino.org/v1alpha1",
      "Mwan3Rule",
      ["reconcile-rule"],
    ],
    ["a CNF Deployment", "sdewan-cnf", "apps/v1", "Deployment", ["on-deployment-ready"]],
    ["a CNF Pod", "sdewan-cnf", "v1", "Pod", ["on-deployment-ready"]],
    ["any Pod (egress source)", "sdewan-egress", "v1", "Pod", ["egress-group-sync"]],
    ["a Namespace", "sdewan-egress", "v1", "Namespace", ["egress-group-sync"]],
    ["an Egress", "sdewan-egress", "crd.antrea.io/v1beta1", "Egress", ["egress-group-sync"]],
    ["any Pod (netpol source)", "sdewan-netpol", "v1", "Pod", ["network-policy-sync"]],
    ["a Namespace (netpol source)", "sdewan-netpol", "v1", "Namespace", ["network-policy-sync"]],
    [
      "a NetworkPolicy",
      "sdewan-netpol",
      "networking.k8s.io/v1",
      "NetworkPolicy",
      ["network-policy-sync"],
    ],
    [
      "an Export",
      "sdewan-clusterlink-export",
      "clusterlink.net/v1alpha1",
      "Export",
      ["clusterlink-export"],
    ],
    [
      "an Import",
      "sdewan-clusterlink-import",
      "clusterlink.net/v1alpha1",
      "Import",
      ["clusterlink-import"],
    ],
    [
      "a Service (import source)",
      "sdewan-clusterlink-import",
      "v1",
      "Service",
      ["clusterlink-import"],
    ],
  ])(
    "%s from %s (%s %s) reaches exactly %j, in Reference and in Resource mode",
    (_, source, apiVersion, kind, expected) => {
      expect(receivers(apiServerEvent(source, apiVersion, kind, "ref"))).toEqual(expected);
      // A user who switches a source to Resource mode must not silently lose its events.
      expect(receivers(apiServerEvent(source, apiVersion, kind, "resource"))).toEqual(expected);
    },
  );

  it("the PingSource resync reaches on-deployment-ready, egress-group-sync, network-policy-sync and the ClusterLink functions but peer-health, whose intake reads it as a resync of every namespace", () => {
    expect(receivers(pingEvent())).toEqual([
      "clusterlink-export",
      "clusterlink-import",
      "egress-group-sync",
      "network-policy-sync",
      "on-deployment-ready",
    ]);
    const ping = ofKind(docs, "PingSource")[0];
    const events = parseIntake({
      headers: {
        "ce-specversion": "1.0",
        "ce-id": "1",
        "ce-source": pingEvent()["source"] ?? "",
        "ce-type": "dev.knative.sources.ping",
        "content-type": at(ping, "spec", "contentType") as string,
      },
      body: Buffer.from(at(ping, "spec", "data") as string),
    });
    expect(events).toEqual([expect.objectContaining({ type: "resync", scope: {} })]);
  });

  it("the heartbeat tick reaches clusterlink-peer-health alone, every second, unretried", () => {
    expect(receivers(pingEvent("sdewan-heartbeat"))).toEqual(["clusterlink-peer-health"]);
    const tick = ofKind(docs, "PingSource").find((p) => p.metadata?.name === "sdewan-heartbeat");
    // Knative's cron takes an optional seconds field: six stars fire once a second.
    expect(at(tick, "spec", "schedule")).toBe("* * * * * *");
    const trigger = triggers.find((t) => t.metadata?.name === "clusterlink-peer-health-heartbeat");
    // A retried tick would probe the same Peers again, overlapping the next tick.
    expect(at(trigger, "spec", "delivery", "retry")).toBe(0);
  });

  it("every other Trigger retries with a backoff and has a dead-letter sink that exists", () => {
    const services = ofKind(docs, "Service").map((s) => s.metadata?.name);
    for (const trigger of triggers) {
      if (trigger.metadata?.name === "clusterlink-peer-health-heartbeat") continue;
      const delivery = at(trigger, "spec", "delivery") as Record<string, unknown>;
      expect(["linear", "exponential"]).toContain(delivery["backoffPolicy"]);
      expect(delivery["retry"]).toBeGreaterThanOrEqual(3);
      expect(services).toContain(at(delivery, "deadLetterSink", "ref", "name"));
    }
  });

  // A CNF or API outage makes the functions answer 503 (a CNF without ready pods does not: 202),
  // and the Broker ignores Retry-After unless the delivery-retryafter feature is on, which this
  // install does not need. An event must outlive a 10-minute outage on retries alone, so nothing real reaches the
  // dead-letter sink; and once the CNF is back, the next retry must come soon (on-deployment-ready
  // has re-applied the CNF by then; the retry confirms the rule and writes its status).
  it("an event Trigger's retries outlast a 10-minute CNF outage, and retry within 2 minutes after it", () => {
    const OUTAGE_S = 600;
    // Event Triggers: those a PingSource does not feed (resyncs and the heartbeat tick).
    const periodic = (t: Doc) => JSON.stringify(at(t, "spec", "filters")).includes("sources.ping");
    for (const trigger of triggers.filter((t) => !periodic(t))) {
      const delivery = at(trigger, "spec", "delivery") as Record<string, unknown>;
      // Knative's Broker waits backoffDelay x n (linear) or x 2^n (exponential) before retry n;
      // whether n counts from 0 or 1, both schedules must hold.
      for (const first of [0, 1]) {
        const attempts = retryTimes(delivery, first); // seconds after the first attempt
        const name = `${String(trigger.metadata?.name)} (n from ${first})`;
        const after = attempts.find((t) => t >= OUTAGE_S);
        expect([name, after !== undefined]).toEqual([name, true]);
        expect([name, (after ?? Infinity) - OUTAGE_S <= 120]).toEqual([name, true]);
        // Deliveries spent on one event by such an outage: every attempt in it, then the one after.
        expect(attempts.filter((t) => t < OUTAGE_S).length + 1).toBeLessThanOrEqual(16);
      }
    }
  });

  // Those retries must not hold back other events: an InMemoryChannel answers the Broker's ingress
  // only once every Trigger's delivery of the event is over (retries included), and each
  // ApiServerSource sends one event at a time, so one rule being retried for 12 minutes would stop
  // every later change of its kind. The Broker's messaging.knative.dev annotations go to its channel.
  it("the Broker's channel fans out in the background, so one event's retries hold back no other", () => {
    const broker = ofKind(docs, "Broker")[0];
    expect(at(broker, "metadata", "annotations", "messaging.knative.dev/async-handler")).toBe(
      "true",
    );
  });

  it("each event function has a Service serving it (FUNCTIONS) where its Triggers post (uri /<name>)", () => {
    for (const name of EVENT_FUNCTIONS) {
      const service = ofKind(docs, "Service").find((s) => s.metadata?.name === name) as Doc;
      const container = at(service, "spec", "template", "spec", "containers", 0);
      const env = at(container, "env") as { name: string; value: string }[];
      expect(env.find((e) => e.name === "FUNCTIONS")?.value).toBe(name);
      expect(env.some((e) => e.name === "PORT")).toBe(false); // Knative reserves PORT
      expect(at(container, "readinessProbe", "httpGet", "path")).toBe("/_/ready");
      expect(at(container, "livenessProbe", "httpGet", "path")).toBe("/_/health");
      expect(at(service, "spec", "template", "metadata", "annotations")).toMatchObject({
        "autoscaling.knative.dev/min-scale": "1",
      });
      const own = triggers.filter((t) => at(t, "spec", "subscriber", "ref", "name") === name);
      expect(own.length).toBeGreaterThan(0);
      for (const t of own) expect(at(t, "spec", "subscriber", "uri")).toBe(`/${name}`);
    }
  });

  it("Services and sources run as ServiceAccounts defined in manifests/rbac", () => {
    const accounts = docsOfFolder("manifests/rbac")
      .filter((d) => d.kind === "ServiceAccount")
      .map((d) => d.metadata?.name);
    const used = [
      ...ofKind(docs, "Service").map((s) =>
        at(s, "spec", "template", "spec", "serviceAccountName"),
      ),
      ...ofKind(docs, "ApiServerSource").map((s) => at(s, "spec", "serviceAccountName")),
    ].filter((name) => name !== undefined);
    expect(used.length).toBeGreaterThan(3);
    for (const name of used) expect(accounts).toContain(name);
  });

  it("ApiServerSources run in Reference mode and watch exactly what the connector routes", () => {
    const sources = ofKind(docs, "ApiServerSource");
    const key = (r: { apiVersion: string; kind: string }) => `${r.apiVersion} ${r.kind}`;
    const watched = sources.flatMap((s) => {
      expect(at(s, "spec", "mode")).toBe("Reference");
      return (at(s, "spec", "resources") as { apiVersion: string; kind: string }[]).map(key);
    });
    const config = yamlDocs("manifests/connector/config.yaml")[0];
    const routed = (
      at(config, "routes") as { resources: { apiVersion: string; kind: string }[] }[]
    ).flatMap((r) => r.resources.map(key));
    expect([...new Set(watched)].sort()).toEqual([...new Set(routed)].sort());
  });
});
