// What the manifests expect of each OpenFaaS Function, checked on two inputs: stack.yml read
// here (stack.test.ts) and the Function resources `faas-cli generate` makes from it
// (faas-cli.test.ts). Shape: the Function CRD's spec, which generate fills from stack.yml.
import { ALL_FUNCTIONS } from "../../../functions/all.js";
import { at, ofKind, yamlDocs } from "./repo-files.js";

export interface FunctionSpec {
  readonly name: string;
  readonly image: string;
  readonly environment?: Record<string, string>;
  readonly secrets?: string[];
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly limits?: { memory?: string; cpu?: string };
  readonly requests?: { memory?: string; cpu?: string };
  readonly readOnlyRootFilesystem?: boolean;
}

export const CNF_SECRET = "sdewan-cnf-password";
/** What OpenFaaS CE deploys at most (faas-netes pkg/handlers/replica_reader.go). */
export const CE_MAX_REPLICAS = 5;
export const CE_MAX_FUNCTIONS = 15;
/** Functions that log in to CNFs and so need the CNF password. */
export const CNF_CALLERS = ["reconcile-rule", "on-deployment-ready"];

/** faas-cli's envsubst for ${VAR:-default}, with the defaults (CI sets none of these). */
export const envsubst = (text: string): string =>
  text.replace(/\$\{(\w+):-([^}]*)\}/g, (_, name: string, fallback: string) => {
    return process.env[name] ?? fallback;
  });

/** The ServiceAccount rbac-pro.yaml binds to the function's ClusterRole. */
function proServiceAccount(name: string): string | undefined {
  const binding = ofKind(yamlDocs("manifests/openfaas/rbac-pro.yaml"), "ClusterRoleBinding").find(
    (b) => at(b, "roleRef", "name") === `sdewan-${name}`,
  );
  return (at(binding, "subjects", 0, "name") as string | undefined) ?? undefined;
}

/** Problems with one Function; [] when it meets every expectation. */
export function functionProblems(spec: FunctionSpec): string[] {
  const problems: string[] = [];
  const expect = (ok: boolean, what: string) => {
    if (!ok) problems.push(`${spec.name}: ${what}`);
  };
  const env = spec.environment ?? {};
  expect(env["FUNCTIONS"] === spec.name, `environment.FUNCTIONS must be "${spec.name}"`);
  expect(
    new RegExp(`/${spec.name}:[\\w.-]+$`).test(spec.image),
    `image ${spec.image} must be <registry>/${spec.name}:<tag>`,
  );
  const needsCnf = CNF_CALLERS.includes(spec.name);
  const hasSecret = (spec.secrets ?? []).includes(CNF_SECRET);
  expect(hasSecret === needsCnf, `secret ${CNF_SECRET} ${needsCnf ? "missing" : "not needed"}`);
  if (hasSecret) {
    expect(
      env["CNF_PASSWORD_FILE"] === `/var/openfaas/secrets/${CNF_SECRET}`,
      "CNF_PASSWORD_FILE must be the mounted secret's path",
    );
  }
  expect(env["PORT"] === undefined, "PORT stays the image's 8080, where OpenFaaS CE probes");
  const labels = spec.labels ?? {};
  expect(Number(labels["com.openfaas.scale.min"]) >= 1, "com.openfaas.scale.min must be >= 1");
  // OpenFaaS CE refuses a deploy asking for more (faas-netes MaxReplicas).
  for (const bound of ["min", "max"]) {
    const value = Number(labels[`com.openfaas.scale.${bound}`] ?? "1");
    expect(
      value <= CE_MAX_REPLICAS,
      `com.openfaas.scale.${bound} must be <= ${CE_MAX_REPLICAS} (CE)`,
    );
  }
  expect(labels["com.openfaas.scale.zero"] === "false", "must not scale to zero");
  const annotations = spec.annotations ?? {};
  expect(
    annotations["com.openfaas.serviceaccount"] === proServiceAccount(spec.name),
    "com.openfaas.serviceaccount must be the account rbac-pro.yaml binds to its role",
  );
  expect(annotations["com.openfaas.health.http.path"] === "/_/health", "health path /_/health");
  expect(annotations["com.openfaas.ready.http.path"] === "/_/ready", "ready path /_/ready");
  expect(/^\d+Mi$/.test(spec.limits?.memory ?? ""), "limits.memory must be set (Mi)");
  expect(spec.requests?.cpu !== undefined, "requests.cpu must be set");
  expect(spec.readOnlyRootFilesystem !== false, "root filesystem must be read-only");
  return problems;
}

export const FUNCTION_NAMES = ALL_FUNCTIONS.map((fn) => fn.name).sort();
