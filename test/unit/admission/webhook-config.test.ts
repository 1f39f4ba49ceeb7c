import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ALL_RULE_KINDS } from "../../../shared/kinds/index.js";
import { BUCKET_LABEL } from "../../../shared/admission/rbac.js";
import {
  RULE_DELETES_WEBHOOK_NAME,
  RULE_DELETE_CONDITIONS,
  RULE_DELETE_PLANS_WEBHOOK_NAME,
  RULE_DELETE_PLAN_CONDITIONS,
  RULE_WRITE_CONDITIONS,
  buildWebhookConfiguration,
  renderWebhookManifest,
} from "../../../shared/admission/webhook-config.js";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

describe("the ValidatingWebhookConfiguration", () => {
  const webhooks = buildWebhookConfiguration({
    clientConfig: { url: "https://127.0.0.1:1/" },
  }).webhooks;
  const [rules, deployments] = webhooks;
  const deletes = webhooks.find((w) => w.name === RULE_DELETES_WEBHOOK_NAME);

  it("covers every rule kind of the registry, fail-closed, for create and update", () => {
    expect(rules).toMatchObject({
      failurePolicy: "Fail",
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
      matchPolicy: "Equivalent",
      matchConditions: RULE_WRITE_CONDITIONS,
      rules: [
        {
          operations: ["CREATE", "UPDATE"],
          resources: ALL_RULE_KINDS.map((k) => k.plural).sort(),
        },
      ],
    });
    expect(rules?.timeoutSeconds).toBeLessThanOrEqual(5);
  });

  it("sends a rule's DELETE only when it is in a bucket and neither a cluster admin nor the namespace controller deletes it (ADR 0010)", () => {
    expect(deletes).toMatchObject({
      failurePolicy: "Fail",
      objectSelector: { matchExpressions: [{ key: BUCKET_LABEL, operator: "Exists" }] },
      matchConditions: RULE_DELETE_CONDITIONS,
      rules: [{ operations: ["DELETE"], resources: ALL_RULE_KINDS.map((k) => k.plural).sort() }],
    });
    const deleteOperations = webhooks.flatMap((w) =>
      w.rules.some((r) => r.operations.includes("DELETE")) ? [w.name] : [],
    );
    expect(deleteOperations).toEqual([RULE_DELETES_WEBHOOK_NAME, RULE_DELETE_PLANS_WEBHOOK_NAME]);
  });

  it("sends any other DELETE of a rule only when it is a dry run, for its plan, fail-open", () => {
    const plans = webhooks.find((w) => w.name === RULE_DELETE_PLANS_WEBHOOK_NAME);
    expect(plans).toMatchObject({
      failurePolicy: "Ignore",
      matchConditions: RULE_DELETE_PLAN_CONDITIONS,
      rules: [{ operations: ["DELETE"], resources: ALL_RULE_KINDS.map((k) => k.plural).sort() }],
    });
    expect(plans?.objectSelector).toBeUndefined();
    expect(RULE_DELETE_PLAN_CONDITIONS[0]?.expression).toBe(
      "has(request.dryRun) && request.dryRun",
    );
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
    expect(config.webhooks.map((w) => w.timeoutSeconds)).toEqual([5, 5, 5, 5, 5]);
  });

  it("is what manifests/webhook holds (run `npm run gen:webhook` after changing the registry)", () => {
    const committed = readFileSync(
      path.join(repo, "manifests/webhook/validating-webhook-configuration.yaml"),
      "utf8",
    );
    expect(committed).toBe(renderWebhookManifest());
  });
});
