// test/node/fixtures, the test doubles as Pods: the CNF is the sample CNF Deployment with the CNF
// simulator in its pods, listening where the functions call (scheme and port from the same code
// they use) with the password from a Secret of the same name and key as theirs; the peer
// gateways are the demo's Peers, each on the port its Service names; both run the image
// dev/image/build-sims.sh writes, as uid 1000, read-only, without capabilities.
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Service } from "kubernetes-models/v1/Service";
import { cnfEndpointConfig } from "../../../shared/cnf/endpoint.js";
import { PURPOSE_LABEL } from "../../../shared/kinds/index.js";
import { DEMO_PEERS } from "../../../dev/demo/clusterlink.js";
import { parseSimArgs } from "../../../dev/peer-gateway-sim/cli.js";
import { at, ofKind, readText, yamlDocs, type Doc } from "./repo-files.js";
import {
  describeWithKustomize,
  kustomizeAvailable,
  kustomizeBuild,
} from "../../support/kustomize.js";

interface Container {
  readonly name: string;
  readonly image?: string;
  readonly imagePullPolicy?: string;
  readonly command?: string[];
  readonly args?: string[];
  readonly env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string } };
  }[];
  readonly ports?: { name: string; containerPort: number }[];
  readonly readinessProbe?: Record<string, unknown>;
  readonly securityContext?: Record<string, unknown>;
  readonly volumeMounts?: { name: string; mountPath: string }[];
}
const containerOf = (d: Doc | undefined): Container =>
  (at(d, "spec", "template", "spec", "containers", 0) ?? {}) as Container;
/** The value after `--<option>` in a command line. */
const option = (args: readonly string[], name: string): string | undefined =>
  args[args.indexOf(`--${name}`) + 1];

/** The image build-sims.sh writes, as a manifest names it (docker.io/library/ left out). */
const SIMS_IMAGE =
  /^image="docker\.io\/library\/(.+)"$/m.exec(readText("dev/image/build-sims.sh"))?.[1] ?? "";

const SECURE = {
  runAsNonRoot: true,
  runAsUser: 1000,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ["ALL"] },
};

describeWithKustomize()("test/node/fixtures as kustomize builds them", () => {
  const docs = kustomizeAvailable ? kustomizeBuild<Doc>("test/node/fixtures") : [];
  const cnf = ofKind(docs, "Deployment").find((d) => d.metadata?.name === "cnf-1");
  const gateways = ofKind(docs, "Deployment").find((d) => d.metadata?.name === "peer-gateway-sim");
  const sample = yamlDocs("manifests/samples/cnf-deployment.yaml")[0] as Doc;
  // reconcile-rule as the plain install runs it: the functions' side of every CNF call.
  const reconcile = kustomizeAvailable
    ? ofKind(kustomizeBuild<Doc>("manifests/plain"), "Deployment").find(
        (d) => d.metadata?.name === "reconcile-rule",
      )
    : undefined;

  it("are Deployments and a Service that validate against the Kubernetes schemas, namespace left to kubectl", () => {
    expect(docs.map((d) => `${d.kind}/${d.metadata?.name}`).sort()).toEqual([
      "Deployment/cnf-1",
      "Deployment/peer-gateway-sim",
      "Service/peer-gateway-sim",
    ]);
    for (const doc of docs) {
      const Model = doc.kind === "Service" ? Service : Deployment;
      expect(() => new Model(doc as never).validate()).not.toThrow();
      expect(doc.metadata?.namespace).toBeUndefined();
    }
  });

  it("run the simulators' image as uid 1000, read-only, without capabilities or a token", () => {
    expect(SIMS_IMAGE).toBe("sdewan-sims:latest");
    for (const d of [cnf, gateways]) {
      const c = containerOf(d);
      expect([d?.metadata?.name, c.image, c.imagePullPolicy]).toEqual([
        d?.metadata?.name,
        SIMS_IMAGE,
        undefined,
      ]);
      expect(c.securityContext).toMatchObject(SECURE);
      expect(at(d, "spec", "template", "spec", "automountServiceAccountToken")).toBe(false);
    }
    expect(containerOf(cnf).command).toEqual(["node", "/sims/cnf-sim.mjs"]);
    expect(containerOf(gateways).command).toEqual(["node", "/sims/peer-gateway-sim.mjs"]);
  });

  it("CNF cnf-1 is the sample CNF Deployment, its readiness probe included", () => {
    expect(cnf?.metadata).toEqual(sample.metadata);
    const spec = (d: Doc | undefined) => at(d, "spec") as Record<string, unknown>;
    expect(spec(cnf)["replicas"]).toBe(spec(sample)["replicas"]);
    expect(spec(cnf)["selector"]).toEqual(spec(sample)["selector"]);
    expect(at(cnf, "spec", "template", "metadata")).toEqual(
      at(sample, "spec", "template", "metadata"),
    );
    expect(at(cnf, "metadata", "labels", PURPOSE_LABEL)).toBe("cnf-1");
    expect(containerOf(cnf).name).toBe(containerOf(sample).name);
    expect(containerOf(cnf).readinessProbe).toEqual(containerOf(sample).readinessProbe);
  });

  it("CNF pods serve where the functions call them, and the probe asks that port", () => {
    // What reconcile-rule's pod environment and the Deployment's annotations make of it.
    const env = Object.fromEntries(
      (containerOf(reconcile).env ?? []).map((e) => [e.name, e.value]),
    );
    const called = cnfEndpointConfig(
      env,
      at(cnf, "metadata", "annotations") as Record<string, string> | undefined,
    );
    expect(called.scheme).toBe("http"); // the simulator serves plain HTTP
    const args = containerOf(cnf).args ?? [];
    expect(Number(option(args, "port"))).toBe(called.port);
    expect(option(args, "host")).toBe("0.0.0.0");
    expect(containerOf(cnf).ports).toEqual([{ name: "http", containerPort: called.port }]);
    expect(at(containerOf(cnf).readinessProbe, "httpGet", "port")).toBe(called.port);
    // A port below 1024 as uid 1000 without capabilities: the pod's network namespace allows it.
    expect(at(cnf, "spec", "template", "spec", "securityContext", "sysctls")).toEqual([
      { name: "net.ipv4.ip_unprivileged_port_start", value: "0" },
    ]);
  });

  it("CNF pods take their password from a Secret of the name and key the functions read theirs from", () => {
    const c = containerOf(reconcile);
    const file = c.env?.find((e) => e.name === "CNF_PASSWORD_FILE")?.value ?? "";
    const mount = c.volumeMounts?.find((m) => file.startsWith(`${m.mountPath}/`));
    const volumes = at(reconcile, "spec", "template", "spec", "volumes") as {
      name: string;
      secret?: { secretName: string };
    }[];
    const theirs = {
      name: volumes.find((v) => v.name === mount?.name)?.secret?.secretName,
      key: file.slice((mount?.mountPath.length ?? 0) + 1),
    };
    const ours = containerOf(cnf).env?.find((e) => e.name === "CNF_SIM_PASSWORD");
    expect(ours?.valueFrom?.secretKeyRef).toEqual(theirs);
    expect(theirs).toEqual({ name: "sdewan-cnf-credentials", key: "password" });
  });

  it("the gateways are the demo's Peers, each on the port its Service names, the identity mounted", () => {
    const c = containerOf(gateways);
    const parsed = parseSimArgs(c.args ?? []);
    if (parsed.kind !== "run") throw new Error(`the fixture's args do not parse: ${parsed.kind}`);
    const { args } = parsed;
    expect(args.peers.map((p) => ({ name: p.name, labels: p.labels, mode: p.mode?.mode }))).toEqual(
      DEMO_PEERS.map((p) => ({
        name: p.name,
        labels: p.labels,
        mode: (p as { mode?: { mode: string } }).mode?.mode ?? "healthy",
      })),
    );
    expect(args.host).toBe("0.0.0.0");
    const expected = [
      ...args.peers.map((p, i) => ({ name: p.name, containerPort: (args.firstPort ?? 0) + i })),
      { name: "control", containerPort: args.controlPort },
    ];
    expect(c.ports).toEqual(expected);
    const service = ofKind(docs, "Service")[0];
    expect(at(service, "spec", "selector")).toEqual(
      at(gateways, "spec", "template", "metadata", "labels"),
    );
    expect(at(service, "spec", "ports")).toEqual(
      expected.map((p) => ({ name: p.name, port: p.containerPort, targetPort: p.name })),
    );
    const mount = c.volumeMounts?.find((m) => m.mountPath === args.tlsDir);
    const volumes = at(gateways, "spec", "template", "spec", "volumes") as {
      name: string;
      secret?: { secretName: string };
    }[];
    expect(volumes.find((v) => v.name === mount?.name)?.secret?.secretName).toBe(
      "peer-gateway-sim-tls",
    );
    expect(at(c.readinessProbe, "httpGet")).toEqual({ path: "/_sim/gateways", port: "control" });
  });
});
