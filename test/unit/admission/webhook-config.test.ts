import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ALL_RULE_KINDS } from "../../../shared/rules/index.js";
import {
  buildWebhookConfiguration,
  renderWebhookManifest,
} from "../../../shared/admission/webhook-config.js";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

describe("the ValidatingWebhookConfiguration", () => {
  const [rules, deployments] = buildWebhookConfiguration({
    clientConfig: { url: "https://127.0.0.1:1/" },
  }).webhooks;

  it("covers every rule kind of the registry, fail-closed, for create, update and delete", () => {
    expect(rules).toMatchObject({
      failurePolicy: "Fail",
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
      matchPolicy: "Equivalent",
      rules: [
        {
          operations: ["CREATE", "UPDATE", "DELETE"],
          resources: ALL_RULE_KINDS.map((k) => k.plural).sort(),
        },
      ],
    });
    expect(rules?.timeoutSeconds).toBeLessThanOrEqual(5);
  });

  it("sees only Deployments that carry sdewanPurpose", () => {
    expect(deployments).toMatchObject({
      objectSelector: { matchExpressions: [{ key: "sdewanPurpose", operator: "Exists" }] },
      rules: [
        { apiGroups: ["apps"], resources: ["deployments"], operations: ["CREATE", "UPDATE"] },
      ],
    });
  });

  it("never waits longer than 5 seconds even when asked to", () => {
    const config = buildWebhookConfiguration({
      clientConfig: { url: "https://x/" },
      timeoutSeconds: 30,
    });
    expect(config.webhooks.map((w) => w.timeoutSeconds)).toEqual([5, 5, 5]);
  });

  it("is what manifests/webhook holds (run `npm run gen:webhook` after changing the registry)", () => {
    const committed = readFileSync(
      path.join(repo, "manifests/webhook/validating-webhook-configuration.yaml"),
      "utf8",
    );
    expect(committed).toBe(renderWebhookManifest());
  });
});
