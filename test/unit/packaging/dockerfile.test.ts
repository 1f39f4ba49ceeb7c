// The Dockerfile, linted structurally (no Docker engine here): multi-stage, pinned Node LTS that
// matches package.json, production dependencies only, non-root numeric user, a health check on
// the runtime's endpoint, an entry that the build produces, and a .dockerignore that lets in
// exactly what the build copies.
import { existsSync } from "node:fs";
import { readText, repoPath, yamlDocs, at } from "./repo-files.js";

interface Instruction {
  readonly keyword: string;
  readonly args: string;
  /** Index of the stage (FROM) it belongs to; -1 before the first FROM. */
  readonly stage: number;
}

/** Instructions of a Dockerfile: comments dropped, backslash continuations joined. */
function parseDockerfile(text: string): Instruction[] {
  const joined = text
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .join("\n")
    .replace(/\\\n/g, " ");
  let stage = -1;
  return joined
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [keyword = "", ...rest] = line.split(/\s+/);
      if (keyword.toUpperCase() === "FROM") stage += 1;
      return { keyword: keyword.toUpperCase(), args: rest.join(" "), stage };
    });
}

const instructions = parseDockerfile(readText("Dockerfile"));
const stages = instructions.filter((i) => i.keyword === "FROM");
const lastStage = stages.length - 1;
const inRuntime = (keyword: string) =>
  instructions.filter((i) => i.stage === lastStage && i.keyword === keyword);
const globalArgs = new Map(
  instructions
    .filter((i) => i.stage === -1 && i.keyword === "ARG")
    .map((i) => i.args.split("=") as [string, string]),
);

/** The image a FROM names, with global ARG defaults substituted. */
const imageOf = (from: Instruction): string =>
  (from.args.split(/\s+/)[0] ?? "").replace(/\$\{(\w+)\}/g, (_, name: string) => {
    return globalArgs.get(name) ?? "";
  });

describe("Dockerfile", () => {
  it("is multi-stage: a build stage and a runtime stage that copies only dist/ from it", () => {
    expect(stages.map((s) => s.args.split(/\s+/).slice(-1)[0])).toEqual(["build", "runtime"]);
    const copies = inRuntime("COPY").map((c) => c.args);
    expect(copies.filter((c) => c.startsWith("--from="))).toEqual([
      "--from=build /src/dist ./dist",
    ]);
  });

  it("pins its base image to a full Node version, the one package.json pins, on a slim variant", () => {
    const pkg = JSON.parse(readText("package.json")) as { devDependencies: { node: string } };
    for (const from of stages) {
      const image = imageOf(from);
      expect(image).toMatch(/^node:\d+\.\d+\.\d+-[a-z]+-slim$/);
      expect(image).toBe(`node:${pkg.devDependencies.node}-bookworm-slim`);
    }
    const major = Number(pkg.devDependencies.node.split(".")[0]);
    // An even major is an LTS line.
    expect(major % 2).toBe(0);
  });

  it("installs production dependencies only in the runtime stage, exactly from the lock", () => {
    const runs = inRuntime("RUN").map((r) => r.args);
    const install = runs.find((r) => /npm ci\b/.test(r)) ?? "";
    expect(install).toMatch(/npm ci\b[^|&]*--omit=dev/);
    // The lock is complete (lockfile.test.ts), so no stage falls back to `npm install`, which
    // could resolve other versions than the lock's.
    expect(instructions.filter((i) => i.keyword === "RUN" && /npm install\b/.test(i.args))).toEqual(
      [],
    );
  });

  it("compiles with the build tsconfig, whose inputs the build stage copies", () => {
    const buildRuns = instructions.filter((i) => i.stage === 0 && i.keyword === "RUN");
    expect(buildRuns.some((r) => r.args.includes("tsc -p tsconfig.build.json"))).toBe(true);
    const copied = instructions
      .filter((i) => i.stage === 0 && i.keyword === "COPY")
      .flatMap((c) => c.args.split(/\s+/).slice(0, -1));
    for (const needed of ["package.json", "package-lock.json", "tsconfig.json", "shared"]) {
      expect(copied).toContain(needed);
    }
    expect(copied).toEqual(expect.arrayContaining(["functions", "connector"]));
  });

  it("runs as a non-root numeric user (so runAsNonRoot can verify it)", () => {
    const users = inRuntime("USER").map((u) => u.args);
    expect(users.length).toBeGreaterThan(0);
    const last = users[users.length - 1] ?? "";
    expect(last).toMatch(/^\d+(:\d+)?$/);
    expect(Number(last.split(":")[0])).toBeGreaterThan(0);
  });

  // Node keys the compile cache's folder by user id: a cache filled by root is never found by the
  // user the image runs as (dev/image/test.sh checks the hits in the built image).
  it("fills the compile cache as the user it runs as, and leaves it readable, not writable, to it", () => {
    const users = inRuntime("USER").map((u) => u.args);
    const [uid, gid] = (users[users.length - 1] ?? "").split(":");
    const warm = inRuntime("RUN").find((r) => r.args.includes("NODE_COMPILE_CACHE"))?.args ?? "";
    expect(warm).toContain(`setpriv --reuid=${uid} --regid=${gid ?? uid} --clear-groups node`);
    expect(warm).toMatch(/chown -R 0:0 "\$NODE_COMPILE_CACHE" && chmod -R a\+rX,go-w/);
  });

  // ... and by the V8 flags: a warm-up without the CMD's flags fills a folder the server never reads.
  it("fills the compile cache with the V8 flags the server runs with", () => {
    const cmd = JSON.parse(inRuntime("CMD")[0]?.args ?? "[]") as string[];
    const flags = cmd.slice(1).filter((a) => a.startsWith("--"));
    const warm = inRuntime("RUN").find((r) => r.args.includes("NODE_COMPILE_CACHE"))?.args ?? "";
    expect(flags.length).toBeGreaterThan(0);
    expect(warm).toContain(`--clear-groups node ${flags.join(" ")} --input-type=module`);
  });

  it("checks health on the runtime's /_/health at PORT, listens on 8080 by default", () => {
    const health = inRuntime("HEALTHCHECK").map((h) => h.args);
    expect(health).toHaveLength(1);
    expect(health[0]).toContain("/_/health");
    expect(health[0]).toContain("process.env.PORT");
    expect(inRuntime("EXPOSE").map((e) => e.args)).toEqual(["8080"]);
    expect(
      inRuntime("ENV")
        .map((e) => e.args)
        .join(" "),
    ).toMatch(/PORT=8080/);
  });

  it("picks the function by build arg FUNCTION, overridable by FUNCTIONS at run time", () => {
    expect(inRuntime("ARG").map((a) => a.args)).toContain('FUNCTION=""');
    expect(
      inRuntime("ENV")
        .map((e) => e.args)
        .join(" "),
    ).toMatch(/FUNCTIONS=\$\{FUNCTION\}/);
  });

  it("starts the bundled server, and every entry the manifests run exists as a source file", () => {
    const cmd = JSON.parse(inRuntime("CMD")[0]?.args ?? "[]") as string[];
    // The function server runs bundled (scripts/bundle.ts, entry "server": functions/server.ts),
    // with V8's optimizing compilers left out (their memory; docs/benchmarks.md#memory).
    expect(cmd).toEqual(["node", "--lite-mode", "dist/bundle/server.js"]);
    expect(readText("scripts/bundle.ts")).toContain('server: "functions/server.ts"');
    const entries: string[] = [];
    const webhook = yamlDocs("manifests/webhook/deployment.yaml").find(
      (d) => d.kind === "Deployment",
    );
    const connector = yamlDocs("manifests/openfaas/connector.yaml")[0];
    for (const doc of [webhook, connector]) {
      const command = at(doc, "spec", "template", "spec", "containers", 0, "command") as string[];
      entries.push(command[1] ?? "");
    }
    for (const entry of entries) {
      const source = entry.replace(/^dist\//, "").replace(/\.js$/, ".ts");
      expect([entry, existsSync(repoPath(source))]).toEqual([entry, true]);
    }
  });
});

describe(".dockerignore", () => {
  const rules = readText(".dockerignore")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));

  it("is an allow-list: everything out, then exactly what the build copies back in", () => {
    expect(rules[0]).toBe("*");
    const allowed = rules.slice(1).map((r) => r.replace(/^!/, "").replace(/\/$/, ""));
    const copiedFromContext = instructions
      .filter((i) => i.keyword === "COPY" && !i.args.startsWith("--from="))
      .flatMap((c) => c.args.split(/\s+/).slice(0, -1));
    expect([...new Set(copiedFromContext)].sort()).toEqual([...allowed].sort());
  });
});
