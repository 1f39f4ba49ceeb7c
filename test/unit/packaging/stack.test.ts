// stack.yml, read as faas-cli reads it: provider, every function of the catalog, a dockerfile template that
// exists locally (faas-cli would otherwise try to pull one), a handler that holds the Dockerfile,
// a `copy` list that holds only what the Dockerfile copies,
// and each function's spec as the manifests expect (openfaas-functions.ts).
import { existsSync } from "node:fs";
import { parse } from "yaml";
import {
  CE_MAX_FUNCTIONS,
  FUNCTION_NAMES,
  envsubst,
  functionProblems,
  type FunctionSpec,
} from "./openfaas-functions.js";
import { readText, repoPath } from "./repo-files.js";

interface StackFunction {
  lang: string;
  handler: string;
  image: string;
  build_args?: Record<string, string>;
  environment?: Record<string, string>;
  secrets?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  limits?: { memory?: string; cpu?: string };
  requests?: { memory?: string; cpu?: string };
  readonly_root_filesystem?: boolean;
}

const stack = parse(envsubst(readText("stack.yml"))) as {
  version: string | number;
  provider: { name: string; gateway: string };
  configuration?: { copy?: string[] };
  functions: Record<string, StackFunction>;
};

/** The sources of the Dockerfile's COPY lines that read the build context (not another stage). */
const dockerfileCopySources = (): string[] =>
  readText("Dockerfile")
    .split("\n")
    .filter((line) => /^COPY\s/.test(line) && !line.includes("--from="))
    .flatMap((line) => line.trim().split(/\s+/).slice(1, -1))
    .map((src) => src.replace(/^\.\//, "").replace(/\/$/, ""));

/** The Function spec faas-cli generate makes of a stack entry. */
const specOf = (name: string, fn: StackFunction): FunctionSpec => ({
  name,
  image: fn.image,
  ...(fn.environment ? { environment: fn.environment } : {}),
  ...(fn.secrets ? { secrets: fn.secrets } : {}),
  ...(fn.labels ? { labels: fn.labels } : {}),
  ...(fn.annotations ? { annotations: fn.annotations } : {}),
  ...(fn.limits ? { limits: fn.limits } : {}),
  ...(fn.requests ? { requests: fn.requests } : {}),
  ...(fn.readonly_root_filesystem === undefined
    ? {}
    : { readOnlyRootFilesystem: fn.readonly_root_filesystem }),
});

describe("stack.yml", () => {
  it("is for the openfaas provider, with a gateway URL", () => {
    expect(String(stack.version)).toBe("1");
    expect(stack.provider.name).toBe("openfaas");
    expect(() => new URL(stack.provider.gateway)).not.toThrow();
  });

  it("declares exactly the functions the server knows, with DNS-label names", () => {
    expect(Object.keys(stack.functions).sort()).toEqual(FUNCTION_NAMES);
    for (const name of Object.keys(stack.functions)) {
      expect(name).toMatch(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
    }
  });

  it("fits one OpenFaaS CE installation, which deploys at most 15 functions", () => {
    expect(Object.keys(stack.functions).length).toBeLessThanOrEqual(CE_MAX_FUNCTIONS);
  });

  it("copies into each build context exactly what the Dockerfile copies (faas-cli's copy list)", () => {
    expect([...(stack.configuration?.copy ?? [])].sort()).toEqual(
      [...new Set(dockerfileCopySources())].sort(),
    );
    for (const source of stack.configuration?.copy ?? []) {
      expect([source, existsSync(repoPath(source))]).toEqual([source, true]);
    }
  });

  it.each(FUNCTION_NAMES)(
    "%s builds from the repository's Dockerfile with its own FUNCTION build arg",
    (name) => {
      const fn = stack.functions[name] as StackFunction;
      expect(fn.lang).toBe("dockerfile");
      expect(existsSync(repoPath(`template/${fn.lang}/template.yml`))).toBe(true);
      expect(existsSync(repoPath(`${fn.handler}/Dockerfile`))).toBe(true);
      expect(fn.build_args).toEqual({ FUNCTION: name });
    },
  );

  it.each(FUNCTION_NAMES)("%s meets the manifests' expectations", (name) => {
    expect(functionProblems(specOf(name, stack.functions[name] as StackFunction))).toEqual([]);
  });

  it("the expectations are real: a function without its secret, with scale-to-zero or more replicas than CE allows fails them", () => {
    const fn = stack.functions["reconcile-rule"] as StackFunction;
    const broken = specOf("reconcile-rule", {
      ...fn,
      secrets: [],
      labels: {
        ...fn.labels,
        "com.openfaas.scale.zero": "true",
        "com.openfaas.scale.max": "6",
      },
    });
    expect(functionProblems(broken)).toEqual([
      "reconcile-rule: secret sdewan-cnf-password missing",
      "reconcile-rule: com.openfaas.scale.max must be <= 5 (CE)",
      "reconcile-rule: must not scale to zero",
    ]);
  });
});
