// manifests/knative through Knative Eventing's own code, as its admission webhook would take each
// object on create: strict decoding into its Go types, SetDefaults, Validate (validate-manifests,
// dev/knative/validate/main.go, built inside the vendored eventing sources by dev/knative/build.sh).
// A schema check passes objects that Knative refuses: the broken copies below prove this one does
// not. Without the binary: outside CI skipped with the reason the build script recorded (no Go, or
// no source archive); in CI (CI=true) a failure, whatever the reason.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { ofKind, repoPath, yamlDocs, type Doc } from "./repo-files.js";
import { inCi } from "../../support/in-ci.js";
import { kustomizeAvailable, kustomizeBuild } from "../../support/kustomize.js";

const dir =
  execFileSync("bash", [repoPath("dev/knative/build.sh"), "--print-path"], { encoding: "utf8" })
    .trim()
    .split("\n")
    .pop() ?? "";
const binary = path.join(dir, "validate-manifests");
const available = existsSync(binary);
const unavailableFile = path.join(dir, "UNAVAILABLE");
const unavailableReason = existsSync(unavailableFile)
  ? readFileSync(unavailableFile, "utf8").trim()
  : undefined;
if (!available && !inCi) {
  console.warn(
    `Knative validation of manifests/knative SKIPPED: ${unavailableReason ?? "run `npm run knative:build`"}`,
  );
}

const FILES = [
  "apiserversources.yaml",
  "broker.yaml",
  "pingsource.yaml",
  "triggers.yaml",
  "services.yaml",
  "kustomization.yaml",
].map((f) => `manifests/knative/${f}`);

const validate = (...args: string[]) => {
  const run = spawnSync(binary, args, { encoding: "utf8", timeout: 60_000 });
  return { status: run.status, out: run.stdout, err: run.stderr };
};

describe("Knative validation availability", () => {
  it("validate-manifests was built by .ci/run (npm run knative:build) when in CI", () => {
    const state = available ? "built" : `missing: ${unavailableReason ?? "not built"}`;
    expect(inCi ? state : "built").toBe("built");
  });
});

(available || inCi ? describe : describe.skip)(
  "manifests/knative by Knative Eventing's own validation",
  () => {
    let work = "";
    beforeAll(() => {
      work = mkdtempSync(path.join(os.tmpdir(), "sdewan-kn-validate-"));
    });
    afterAll(() => {
      if (work !== "") rmSync(work, { recursive: true, force: true });
    });

    it("accepts every Broker, Trigger, ApiServerSource and PingSource of manifests/knative", () => {
      const { status, out, err } = validate(...FILES.map(repoPath));
      expect({ status, err }).toEqual({ status: 0, err: "" });
      const ok = out.split("\n").filter((l) => l.startsWith("ok "));
      // Every Knative Eventing object was checked, none skipped.
      const eventing = FILES.flatMap((f) => yamlDocs(f)).filter((d) =>
        ["Broker", "Trigger", "ApiServerSource", "PingSource"].includes(String(d["kind"])),
      );
      expect(ok).toHaveLength(eventing.length);
      expect(eventing.length).toBeGreaterThanOrEqual(9);
    });

    it("accepts every Eventing object of manifests/knative-deployments (refs to core Services)", () => {
      if (!kustomizeAvailable && !inCi) return; // kustomize.test.ts says how to build it
      const eventing = kustomizeBuild<Doc>("manifests/knative-deployments").filter((d) =>
        /knative\.dev\//.test(d.apiVersion ?? ""),
      );
      const target = path.join(work, "knative-deployments.yaml");
      writeFileSync(target, eventing.map((d) => stringify(d)).join("---\n"));
      const { status, out, err } = validate(target);
      expect({ status, err }).toEqual({ status: 0, err: "" });
      expect(out.split("\n").filter((l) => l.startsWith("ok "))).toHaveLength(eventing.length);
    });

    // The feature flags the install needs (docs/deploy.md): Knative's defaults. delivery-timeout
    // (on by default) carries the Triggers' timeout; delivery-retryafter (off by default) is not
    // needed, because no Trigger sets retryAfterMax (the retry budget alone outlasts a CNF outage).
    it("needs delivery-timeout, which Knative enables by default", () => {
      const triggers = repoPath("manifests/knative/triggers.yaml");
      expect(validate("--feature", "delivery-timeout=disabled", triggers).out).toMatch(
        /^invalid .*Trigger\/reconcile-rule: .*timeout/m,
      );
      expect(validate("--feature", "delivery-timeout=enabled", triggers).status).toBe(0);
    });

    it("would need delivery-retryafter (off by default) for retryAfterMax, which no Trigger sets", () => {
      const withMax = (features: string[]) => {
        const trigger = structuredClone(
          ofKind(yamlDocs("manifests/knative/triggers.yaml"), "Trigger")[0],
        ) as Doc & {
          spec: { delivery: Record<string, unknown> };
        };
        trigger.spec.delivery["retryAfterMax"] = "PT2M";
        const target = path.join(work, "retry-after-max.yaml");
        writeFileSync(target, stringify(trigger));
        return validate(...features, target);
      };
      expect(withMax([]).out).toMatch(/^invalid .*retryAfterMax/m);
      expect(withMax(["--feature", "delivery-retryafter=enabled"]).status).toBe(0);
    });

    /** A copy of the first `kind` of `file`, broken by `edit`, validated on its own. */
    const broken = (file: string, kind: string, edit: (spec: Record<string, unknown>) => void) => {
      const original = ofKind(yamlDocs(`manifests/knative/${file}`), kind)[0] as Doc;
      const copy = structuredClone(original) as Doc & { spec: Record<string, unknown> };
      edit(copy.spec);
      const target = path.join(work, `${kind}-${Math.random().toString(36).slice(2)}.yaml`);
      writeFileSync(target, stringify(copy));
      return validate(target);
    };

    it.each([
      [
        "a Trigger filter with two dialects",
        "triggers.yaml",
        "Trigger",
        (s: Record<string, unknown>) => {
          s["filters"] = [{ exact: { type: "a" }, prefix: { type: "b" } }];
        },
        /filters/,
      ],
      [
        "a Trigger backoff delay that is not an ISO 8601 duration",
        "triggers.yaml",
        "Trigger",
        (s: Record<string, unknown>) => {
          (s["delivery"] as Record<string, unknown>)["backoffDelay"] = "0.5s";
        },
        /backoffDelay/,
      ],
      [
        "a misspelt Trigger field (strict decoding)",
        "triggers.yaml",
        "Trigger",
        (s: Record<string, unknown>) => {
          s["subscribers"] = s["subscriber"];
        },
        /strict decoding.*subscribers/,
      ],
      [
        "an ApiServerSource mode that is neither Reference nor Resource",
        "apiserversources.yaml",
        "ApiServerSource",
        (s: Record<string, unknown>) => {
          s["mode"] = "Ref";
        },
        /mode/,
      ],
      [
        "a PingSource schedule that does not parse",
        "pingsource.yaml",
        "PingSource",
        (s: Record<string, unknown>) => {
          s["schedule"] = "every minute";
        },
        /schedule/,
      ],
    ])("refuses %s", (_what, file, kind, edit, why) => {
      const { status, out } = broken(file, kind, edit);
      expect(status).toBe(1);
      expect(out).toMatch(new RegExp(`^invalid .*${kind}/`, "m"));
      expect(out).toMatch(why);
    });
  },
);
