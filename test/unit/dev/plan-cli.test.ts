// npm run plan's arguments, manifests and pacing (dev/plan): what it reads from the command line
// and the files, and that it plans restarts under the pacing the manifests ship.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadManifests, manifestFiles, parsePlanArgs } from "../../../dev/plan/files.js";
import { SHIPPED_RESTART_MIN_INTERVAL_MS, planPacing } from "../../../dev/plan/plan.js";
import { at, readText, yamlDocs } from "../packaging/repo-files.js";
import { parse } from "yaml";

describe("npm run plan's arguments", () => {
  it.each([
    [["-f", "a.yaml"], { files: ["a.yaml"], delete: false, output: "table", namespace: "default" }],
    [
      ["-f", "dir", "-f", "b.yaml", "--delete", "-o", "json", "-n", "edge"],
      { files: ["dir", "b.yaml"], delete: true, output: "json", namespace: "edge" },
    ],
  ])("%j", (argv, options) => {
    expect(parsePlanArgs(argv)).toEqual(options);
  });

  it.each([
    [[], "no -f given"],
    [["-f", "a.yaml", "-o", "yaml"], '-o must be json or table, got "yaml"'],
    [["-f", "a.yaml", "--force"], "Unknown option '--force'"],
  ])("%j is refused, saying why and how to call it", (argv, why) => {
    const parsed = parsePlanArgs(argv);
    expect("error" in parsed && parsed.error).toContain(why);
    expect("error" in parsed && parsed.error).toContain("usage: npm run plan --");
  });
});

describe("the manifests npm run plan reads", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "plan-files-"));
  const zone = (name: string) =>
    `apiVersion: batch.sdewan.akraino.org/v1alpha1\nkind: FirewallZone\nmetadata: {name: ${name}}\nspec: {network: [n1]}\n`;
  writeFileSync(path.join(dir, "b.yaml"), `${zone("z2")}---\n${zone("z3")}`);
  writeFileSync(
    path.join(dir, "a.json"),
    JSON.stringify({ apiVersion: "v1", kind: "List", items: [parse(zone("z1"))] }),
  );
  writeFileSync(path.join(dir, "notes.txt"), "not a manifest");

  it("a directory's .yaml, .yml and .json files in name order, YAML streams and Lists unpacked", () => {
    expect(manifestFiles(dir).map((f) => path.basename(f))).toEqual(["a.json", "b.yaml"]);
    expect(loadManifests([dir]).map((o) => o.metadata.name)).toEqual(["z1", "z2", "z3"]);
  });

  it("a document that is no Kubernetes object is an error naming the file and document", () => {
    const bad = path.join(dir, "bad.yml");
    writeFileSync(bad, `${zone("z4")}---\nkind: FirewallZone\n`);
    expect(() => loadManifests([bad])).toThrow(`${bad} document 2 is not a Kubernetes object`);
  });
});

describe("the pacing a burst is planned under", () => {
  it("is the shipped one unless CNF_RESTART_* say otherwise", () => {
    expect(planPacing({})).toEqual({
      minIntervalMs: SHIPPED_RESTART_MIN_INTERVAL_MS,
      quietMs: 1000,
    });
    expect(planPacing({ CNF_RESTART_MIN_INTERVAL_MS: "0" })).toEqual({
      minIntervalMs: 0,
      quietMs: 1000,
    });
  });

  it("equals what stack.yml and the Knative Services set", () => {
    const stack = parse(readText("stack.yml")) as {
      functions: Record<string, { environment?: Record<string, string> }>;
    };
    const set = Object.values(stack.functions).flatMap(
      (f) => f.environment?.["CNF_RESTART_MIN_INTERVAL_MS"] ?? [],
    );
    const knative = yamlDocs("manifests/knative/services.yaml").flatMap((doc) => {
      const env = at(doc, "spec", "template", "spec", "containers", 0, "env") as
        { name: string; value: string }[] | undefined;
      return (env ?? [])
        .filter((e) => e.name === "CNF_RESTART_MIN_INTERVAL_MS")
        .map((e) => e.value);
    });
    expect(set.length).toBeGreaterThan(0);
    expect(knative.length).toBeGreaterThan(0);
    expect([...new Set([...set, ...knative])]).toEqual([String(SHIPPED_RESTART_MIN_INTERVAL_MS)]);
  });
});
