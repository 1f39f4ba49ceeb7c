// manifests/plain as `kubectl apply -k` would install it (kustomize's own output): every object
// validates against the Kubernetes schemas; every function of the catalog runs as a Deployment
// behind a Service, with its Knative Service's environment, Secrets and limits; the connector's
// routes reach each event function's Service and path; every container runs as the Dockerfile
// and the security settings promise; and nothing references an identity, a ConfigMap or a Secret
// that the variant does not create or docs/deploy.md does not name as the user's to create.
import { KUBERNETES_MODELS } from "./kubernetes-models.js";
import { parse } from "yaml";
import { FUNCTION_CATALOG } from "../../../functions/catalog.js";
import { ALL_FUNCTIONS } from "../../../functions/all.js";
import { parseConfig } from "../../../connector/config.js";
import { at, docsOfFolder, ofKind, readText, yamlDocs, type Doc } from "./repo-files.js";
import {
  describeWithKustomize,
  kustomizeAvailable,
  kustomizeBuild,
} from "../../support/kustomize.js";

const MODELS = KUBERNETES_MODELS;

interface EnvVar {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: { secretKeyRef?: { name: string }; configMapKeyRef?: { name: string } };
}
interface Mount {
  readonly name: string;
  readonly mountPath: string;
}
interface Container {
  readonly name: string;
  readonly image?: string;
  readonly imagePullPolicy?: string;
  readonly command?: string[];
  readonly env?: EnvVar[];
  readonly ports?: { name?: string; containerPort: number }[];
  readonly readinessProbe?: { httpGet?: { path: string; port: string | number } };
  readonly livenessProbe?: { httpGet?: { path: string; port: string | number } };
  readonly resources?: unknown;
  readonly securityContext?: Record<string, unknown>;
  readonly volumeMounts?: Mount[];
  readonly envFrom?: { secretRef?: { name: string }; configMapRef?: { name: string } }[];
}
interface Volume {
  readonly name: string;
  readonly secret?: { secretName: string };
  readonly configMap?: { name: string };
}
interface PodSpec {
  readonly serviceAccountName?: string;
  readonly containers: Container[];
  readonly volumes?: Volume[];
}

const podSpec = (d: Doc): PodSpec => at(d, "spec", "template", "spec") as PodSpec;
const podLabels = (d: Doc): Record<string, string> =>
  at(d, "spec", "template", "metadata", "labels") as Record<string, string>;
const env = (c: Container | undefined, name: string): string | undefined =>
  c?.env?.find((e) => e.name === name)?.value;
const selects = (service: Doc, deployment: Doc): boolean =>
  Object.entries(at(service, "spec", "selector") as Record<string, string>).every(
    ([k, v]) => podLabels(deployment)[k] === v,
  );

/** The Deployment whose container serves `fn`: FUNCTIONS=<fn>, or the webhook's own entry. */
function servingDeployment(docs: readonly Doc[], fn: string): Doc[] {
  return ofKind(docs, "Deployment").filter((d) =>
    podSpec(d).containers.some(
      (c) =>
        env(c, "FUNCTIONS") === fn ||
        (c.command ?? []).join(" ").includes(`dist/functions/${fn}/main.js`),
    ),
  );
}

/** The Service at `host:port` (a cluster-local name, <service>.<namespace>.svc), if any. */
function serviceAt(docs: readonly Doc[], url: URL): Doc | undefined {
  const [name, namespace, svc] = url.hostname.split(".");
  if (svc !== "svc") return undefined;
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  return ofKind(docs, "Service").find(
    (s) =>
      s.metadata?.name === name &&
      s.metadata?.namespace === namespace &&
      (at(s, "spec", "ports") as { port: number }[]).some((p) => p.port === port),
  );
}

/** The Secrets docs/deploy.md's plain Kubernetes section tells the user to create, with keys. */
function documentedSecrets(): Map<string, string[]> {
  const text = readText("docs/deploy.md");
  const section = text.slice(text.indexOf("## Plain Kubernetes"), text.indexOf("\n## Knative"));
  const rows = [...section.matchAll(/^\| `([a-z0-9.-]+)` \| ((?:`[^`]+`(?:, )?)+) \|/gm)];
  return new Map(
    rows.map((m) => [m[1] ?? "", [...(m[2] ?? "").matchAll(/`([^`]+)`/g)].map((k) => k[1] ?? "")]),
  );
}

const EVENT_FUNCTIONS = ALL_FUNCTIONS.filter((f) => f.kind === "event").map((f) => f.name);
const knative = ofKind(docsOfFolder("manifests/knative"), "Service");

describeWithKustomize()("manifests/plain as kustomize builds it", () => {
  const docs = kustomizeAvailable ? kustomizeBuild<Doc>("manifests/plain") : [];
  const deployments = ofKind(docs, "Deployment");
  const containers = deployments.flatMap((d) => podSpec(d).containers);

  it.each(docs.map((d) => [`${d.kind} ${d.metadata?.name}`, d] as const))(
    "%s validates against the Kubernetes schema",
    (_, doc) => {
      const Model = MODELS[doc.kind ?? ""];
      expect([doc.kind, Model !== undefined]).toEqual([doc.kind, true]);
      expect(() => new (Model as NonNullable<typeof Model>)(doc as never).validate()).not.toThrow();
    },
  );

  it("runs every function of the catalog as one Deployment behind a Service on a named port", () => {
    for (const { name } of FUNCTION_CATALOG) {
      const serving = servingDeployment(docs, name);
      expect([name, serving.length]).toEqual([name, 1]);
      const deployment = serving[0] as Doc;
      const services = ofKind(docs, "Service").filter((s) => selects(s, deployment));
      expect([name, services.length]).toEqual([name, 1]);
      const ports = podSpec(deployment).containers.flatMap((c) => c.ports ?? []);
      for (const port of at(services[0], "spec", "ports") as { targetPort: string }[]) {
        expect([name, ports.some((p) => p.name === port.targetPort)]).toEqual([name, true]);
      }
    }
  });

  it("gives each function the environment, Secrets, probes and limits of its Knative Service", () => {
    const compared = knative.filter((k) => EVENT_FUNCTIONS.includes(String(k.metadata?.name)));
    expect(compared.map((k) => k.metadata?.name).sort()).toEqual([...EVENT_FUNCTIONS].sort());
    for (const ksvc of compared) {
      const name = String(ksvc.metadata?.name);
      const theirs = at(ksvc, "spec", "template", "spec") as PodSpec;
      const ours = podSpec(servingDeployment(docs, name)[0] as Doc);
      const [a, b] = [theirs.containers[0], ours.containers[0]];
      const sorted = (c?: Container) =>
        [...(c?.env ?? [])].sort((x, y) => x.name.localeCompare(y.name));
      expect([name, sorted(b)]).toEqual([name, sorted(a)]);
      expect([name, b?.resources]).toEqual([name, a?.resources]);
      expect([name, b?.volumeMounts]).toEqual([name, a?.volumeMounts]);
      expect([name, ours.volumes]).toEqual([name, theirs.volumes]);
      expect([name, ours.serviceAccountName]).toEqual([name, theirs.serviceAccountName]);
      expect(b?.readinessProbe?.httpGet?.path).toBe(a?.readinessProbe?.httpGet?.path);
      expect(b?.livenessProbe?.httpGet?.path).toBe(a?.livenessProbe?.httpGet?.path);
    }
  });

  it("routes every event function to its Service and path, watching what the shipped config watches", () => {
    const configMap = ofKind(docs, "ConfigMap").find((c) =>
      String(c.metadata?.name).startsWith("sdewan-connector-config-"),
    );
    const config = parseConfig(parse(String(at(configMap, "data", "config.yaml"))));
    expect(config.routes.map((r) => r.name).sort()).toEqual([...EVENT_FUNCTIONS].sort());
    for (const route of config.routes) {
      const url = new URL(route.url);
      const service = serviceAt(docs, url);
      expect([route.name, service?.metadata?.name]).toEqual([route.name, route.name]);
      const behind = deployments.filter((d) => service !== undefined && selects(service, d));
      expect([route.name, behind.map((d) => env(podSpec(d).containers[0], "FUNCTIONS"))]).toEqual([
        route.name,
        [route.name],
      ]);
      expect(url.pathname).toBe(`/${route.name}`); // functions/server.ts: POST /<name>
    }
    const shipped = parseConfig(parse(readText("manifests/connector/config.yaml")));
    const watched = (c: typeof config) => c.routes.map((r) => ({ ...r, url: "" }));
    expect(watched(config)).toEqual(watched(shipped));
    // The connector Deployment mounts exactly this ConfigMap (kustomize put its hash in both).
    const connector = deployments.find((d) => d.metadata?.name === "sdewan-connector") as Doc;
    expect(podSpec(connector).volumes?.map((v) => v.configMap?.name)).toEqual([
      configMap?.metadata?.name,
    ]);
    expect(connector["spec"]).toMatchObject({ replicas: 1, strategy: { type: "Recreate" } });
  });

  it("runs every container from the one image, as uid 1000, read-only, with no capabilities", () => {
    expect(containers.length).toBe(deployments.length);
    for (const c of containers) {
      expect([c.name, c.image, c.imagePullPolicy]).toEqual([
        c.name,
        "sdewan-functions:latest",
        undefined,
      ]);
      expect([c.name, c.securityContext]).toEqual([
        c.name,
        expect.objectContaining({
          runAsNonRoot: true,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
        }),
      ]);
      expect([c.name, c.readinessProbe?.httpGet?.path]).toEqual([
        c.name,
        expect.stringMatching(/^\/(_\/ready|readyz)$/),
      ]);
      expect([c.name, c.livenessProbe?.httpGet?.path]).toEqual([
        c.name,
        expect.stringMatching(/^\/(_\/health|healthz)$/),
      ]);
    }
    // The Dockerfile's user (USER 1000:1000), said again where the manifests set one.
    for (const c of containers.filter((x) => x.securityContext?.["runAsUser"] !== undefined)) {
      expect([c.name, c.securityContext?.["runAsUser"]]).toEqual([c.name, 1000]);
    }
  });

  it("takes the webhook's Deployment and Service from manifests/webhook unchanged", () => {
    const shipped = yamlDocs("manifests/webhook/deployment.yaml");
    for (const kind of ["Deployment", "Service", "PodDisruptionBudget"]) {
      const theirs = ofKind(shipped, kind)[0];
      const ours = ofKind(docs, kind).find((d) => d.metadata?.name === theirs?.metadata?.name);
      expect([kind, ours]).toEqual([kind, theirs]);
    }
  });

  it("references only ServiceAccounts and ConfigMaps it creates, and Secrets docs/deploy.md names as yours", () => {
    const created = (kind: string) =>
      new Set(ofKind(docs, kind).map((d) => `${d.metadata?.namespace}/${d.metadata?.name}`));
    const accounts = created("ServiceAccount");
    const configMaps = created("ConfigMap");
    const secrets = documentedSecrets();
    expect([...secrets.keys()].sort()).toEqual([
      "clusterlink-peer-tls",
      "sdewan-cnf-credentials",
      "validate-admission-tls",
    ]);
    expect(ofKind(docs, "Secret")).toEqual([]);
    const usedSecrets = new Set<string>();
    for (const d of deployments) {
      const ns = d.metadata?.namespace;
      const spec = podSpec(d);
      expect([d.metadata?.name, accounts.has(`${ns}/${spec.serviceAccountName}`)]).toEqual([
        d.metadata?.name,
        true,
      ]);
      for (const v of spec.volumes ?? []) {
        if (v.configMap)
          expect([v.name, configMaps.has(`${ns}/${v.configMap.name}`)]).toEqual([v.name, true]);
        if (v.secret) usedSecrets.add(v.secret.secretName);
      }
      for (const c of spec.containers) {
        for (const e of c.env ?? []) {
          const ref = e.valueFrom?.secretKeyRef?.name;
          if (ref !== undefined) usedSecrets.add(ref);
          expect(e.valueFrom?.configMapKeyRef).toBeUndefined();
        }
        expect(c.envFrom).toBeUndefined();
        // A file a variable names inside a mounted Secret is one of the keys the docs list.
        for (const e of c.env ?? []) {
          const mount = (c.volumeMounts ?? []).find((m) => e.value?.startsWith(`${m.mountPath}/`));
          const secret = spec.volumes?.find((v) => v.name === mount?.name)?.secret?.secretName;
          if (secret === undefined || e.value === undefined) continue;
          const file = e.value.slice((mount?.mountPath.length ?? 0) + 1);
          expect([e.name, secrets.get(secret)?.includes(file)]).toEqual([e.name, true]);
        }
      }
    }
    expect([...usedSecrets].sort()).toEqual([...secrets.keys()].sort());
    // Bindings name accounts and roles the variant creates.
    const roles = (kind: string) => new Set(ofKind(docs, kind).map((r) => r.metadata?.name));
    for (const binding of [...ofKind(docs, "ClusterRoleBinding"), ...ofKind(docs, "RoleBinding")]) {
      const ref = at(binding, "roleRef") as { kind: string; name: string };
      expect([binding.metadata?.name, roles(ref.kind).has(ref.name)]).toEqual([
        binding.metadata?.name,
        true,
      ]);
      for (const s of at(binding, "subjects") as {
        kind: string;
        name: string;
        namespace: string;
      }[]) {
        if (s.kind === "ServiceAccount")
          expect(accounts.has(`${s.namespace}/${s.name}`)).toBe(true);
      }
    }
  });

  it("takes the NetworkPolicy node agent's DaemonSet from manifests/netpol-agent unchanged, as an account it creates", () => {
    const [theirs] = ofKind(yamlDocs("manifests/netpol-agent/daemonset.yaml"), "DaemonSet");
    const daemonSets = ofKind(docs, "DaemonSet");
    expect(daemonSets).toEqual([theirs]);
    const account = `${theirs?.metadata?.namespace}/${podSpec(theirs as Doc).serviceAccountName}`;
    const accounts = ofKind(docs, "ServiceAccount").map(
      (d) => `${d.metadata?.namespace}/${d.metadata?.name}`,
    );
    expect(accounts).toContain(account);
  });

  it("points the webhook configuration at the webhook's Service and port", () => {
    const configuration = ofKind(docs, "ValidatingWebhookConfiguration")[0];
    for (const hook of at(configuration, "webhooks") as {
      clientConfig: { service: { name: string; namespace: string; port: number } };
    }[]) {
      const { name, namespace, port } = hook.clientConfig.service;
      expect(serviceAt(docs, new URL(`https://${name}.${namespace}.svc:${port}`))).toBeDefined();
    }
  });
});
