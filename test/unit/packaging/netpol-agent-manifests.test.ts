// The NetworkPolicy node agent as shipped (manifests/netpol-agent, manifests/rbac/netpol-node-agent.yaml):
// a DaemonSet of the project's image on the host's network with NET_ADMIN as its only capability
// and a read-only root, its node from the downward API, settings the agent accepts, a read-only
// role, and every install variant carrying it. What the role allows, against the API server:
// test/integration/rbac.test.ts.
import { existsSync } from "node:fs";
import { agentConfigFromEnv } from "../../../functions/netpol-node-agent/agent.js";
import { at, ofKind, repoPath, yamlDocs } from "./repo-files.js";

const [daemonSet] = ofKind(yamlDocs("manifests/netpol-agent/daemonset.yaml"), "DaemonSet");
const pod = at(daemonSet, "spec", "template", "spec") as Record<string, unknown>;
const container = at(pod, "containers", 0) as {
  command: string[];
  env: { name: string; value?: string; valueFrom?: unknown }[];
  securityContext: Record<string, unknown>;
  ports: { name: string; containerPort: number }[];
};
const rbac = yamlDocs("manifests/rbac/netpol-node-agent.yaml");

describe("manifests/netpol-agent: the node agent's DaemonSet", () => {
  it("runs the agent's entry of the project's image, one per node, on every node, on the host's network", () => {
    const entry = container.command[1] ?? "";
    expect(container.command).toEqual(["node", "dist/functions/netpol-node-agent/main.js"]);
    expect(existsSync(repoPath(entry.replace(/^dist\//, "").replace(/\.js$/, ".ts")))).toBe(true);
    expect(at(container, "image")).toMatch(/^sdewan-functions:/);
    expect(pod["hostNetwork"]).toBe(true);
    expect(pod["tolerations"]).toEqual([{ operator: "Exists" }]);
  });

  it("has NET_ADMIN as its only capability, a read-only root, no privilege escalation", () => {
    expect(container.securityContext).toEqual({
      runAsUser: 0,
      runAsNonRoot: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"], add: ["NET_ADMIN"] },
    });
    expect(pod["securityContext"]).toBeUndefined();
  });

  it("takes its node from the downward API, and its settings are ones the agent accepts", () => {
    const nodeName = container.env.find((e) => e.name === "NODE_NAME");
    expect(nodeName?.valueFrom).toEqual({ fieldRef: { fieldPath: "spec.nodeName" } });
    const env = Object.fromEntries(container.env.map((e) => [e.name, e.value ?? "node-a"]));
    const config = agentConfigFromEnv(env);
    expect(config).toMatchObject({ node: "node-a", podInterfaces: ["sdewanbr0"] });
    expect(container.ports).toEqual([{ name: "http", containerPort: config.port }]);
    expect(at(container, "readinessProbe", "httpGet", "path")).toBe("/_/ready");
    expect(at(container, "livenessProbe", "httpGet", "path")).toBe("/_/health");
  });

  it("runs as the agent's ServiceAccount, whose role only reads", () => {
    const account = ofKind(rbac, "ServiceAccount")[0];
    expect(pod["serviceAccountName"]).toBe(account?.metadata?.name);
    expect(at(daemonSet, "metadata", "namespace")).toBe(account?.metadata?.namespace);
    const rules = at(ofKind(rbac, "ClusterRole")[0], "rules") as { verbs: string[] }[];
    expect(new Set(rules.flatMap((r) => r.verbs))).toEqual(new Set(["get", "list", "watch"]));
  });

  it.each(["manifests/knative", "manifests/openfaas", "manifests/plain"])(
    "%s installs it (every variant network-policy-sync is in)",
    (variant) => {
      const resources = at(yamlDocs(`${variant}/kustomization.yaml`)[0], "resources") as string[];
      expect(resources).toContain("../netpol-agent");
      expect(resources).toContain("../rbac");
    },
  );
});

describe("agentConfigFromEnv: settings that cannot work are refused, saying which", () => {
  it("without NODE_NAME or the pod interfaces", () => {
    expect(() => agentConfigFromEnv({})).toThrow(
      /NODE_NAME is required[\s\S]*NETPOL_AGENT_POD_INTERFACES is required/,
    );
  });

  it("an interface name the kernel would not accept", () => {
    expect(() =>
      agentConfigFromEnv({ NODE_NAME: "n", NETPOL_AGENT_POD_INTERFACES: "a-name-far-too-long0" }),
    ).toThrow(/an interface name \(15 bytes\)/);
  });
});
