/**
 * The ValidatingWebhookConfiguration of validate-admission, built from the rule registry so the
 * list of rule kinds is never kept by hand. manifests/webhook/ is generated from this
 * (scripts/gen-webhook.ts), and the integration tests register it with a URL and caBundle.
 */
import { stringify } from "yaml";
import {
  CLUSTERLINK_GROUP,
  CLUSTERLINK_KINDS,
  CLUSTERLINK_VERSION,
  type ClusterLinkKind,
} from "../core/api-groups.js";
import { ALL_RULE_KINDS, PURPOSE_LABEL, RULE_GROUP, RULE_VERSION } from "../kinds/index.js";
import { CLUSTERLINK_ADMISSION_KINDS } from "./plan-clusterlink.js";
import { BUCKET_LABEL, CLUSTER_ADMIN_GROUP } from "./rbac.js";

export const WEBHOOK_CONFIGURATION_NAME = "sdewan-validate-admission";
export const RULES_WEBHOOK_NAME = "rules.validate-admission.sdewan.akraino.org";
export const CNF_WEBHOOK_NAME = "cnf-deployments.validate-admission.sdewan.akraino.org";
export const CLUSTERLINK_WEBHOOK_NAME = "clusterlink.validate-admission.sdewan.akraino.org";
export const RULE_DELETES_WEBHOOK_NAME = "rule-deletes.validate-admission.sdewan.akraino.org";
export const RULE_DELETE_PLANS_WEBHOOK_NAME =
  "rule-delete-plans.validate-admission.sdewan.akraino.org";

/**
 * The users that delete a namespace's content: kube-controller-manager's namespace controller
 * with --use-service-account-credentials, or the controller manager's own user without it.
 */
export const NAMESPACE_DELETERS = [
  "system:serviceaccount:kube-system:namespace-controller",
  "system:kube-controller-manager",
] as const;

/** A CEL value of `path` (under object or oldObject) that is equal whether absent or empty. */
const field = (root: "object" | "oldObject", path: string, empty: string): string =>
  `(has(${root}.${path}) ? ${root}.${path} : ${empty})`;
const changed = (path: string, empty: string): string =>
  `${field("object", path, empty)} != ${field("oldObject", path, empty)}`;

/**
 * CREATE and UPDATE of rules are reviewed unless the UPDATE leaves spec, labels, annotations and
 * owner references as they were: such an update changes only finalizers (the controller's claim
 * and release), which no policy concerns, so a slow or absent webhook never keeps a deleted
 * rule from being released (ADR 0010).
 */
export const RULE_WRITE_CONDITIONS: readonly MatchCondition[] = [
  {
    name: "changes-more-than-finalizers",
    expression: [
      "request.operation != 'UPDATE'",
      changed("spec", "null"),
      changed("metadata.labels", "{}"),
      changed("metadata.annotations", "{}"),
      changed("metadata.ownerReferences", "[]"),
    ].join(" || "),
  },
];

/**
 * A DELETE is reviewed only where the bucket policy has something to decide: a labelled rule
 * (objectSelector), deleted by someone who is neither a cluster admin (always granted) nor the
 * namespace controller (whose deletes follow a namespace deletion RBAC already allowed).
 */
export const RULE_DELETE_CONDITIONS: readonly MatchCondition[] = [
  {
    name: "not-a-cluster-admin",
    expression: `!has(request.userInfo.groups) || !('${CLUSTER_ADMIN_GROUP}' in request.userInfo.groups)`,
  },
  {
    name: "not-the-namespace-controller",
    expression: `!(request.userInfo.username in [${NAMESPACE_DELETERS.map((u) => `'${u}'`).join(", ")}])`,
  },
];

const IS_CLUSTER_ADMIN = `has(request.userInfo.groups) && '${CLUSTER_ADMIN_GROUP}' in request.userInfo.groups`;
const IS_NAMESPACE_DELETER = `request.userInfo.username in [${NAMESPACE_DELETERS.map((u) => `'${u}'`).join(", ")}]`;

/**
 * A `kubectl delete --dry-run=server` of a rule the bucket webhook does not review: sent only to
 * get the plan of the deletion (docs/plan.md). A real DELETE never matches, so deletes still never
 * wait on the webhook (ADR 0010); the ones the bucket webhook reviews get their plan there.
 */
export const RULE_DELETE_PLAN_CONDITIONS: readonly MatchCondition[] = [
  { name: "dry-run", expression: "has(request.dryRun) && request.dryRun" },
  {
    name: "not-reviewed-for-its-bucket",
    expression: `!(has(oldObject.metadata.labels) && '${BUCKET_LABEL}' in oldObject.metadata.labels) || (${IS_CLUSTER_ADMIN}) || ${IS_NAMESPACE_DELETER}`,
  },
];

/** Where the API server sends reviews: an in-cluster Service, or a URL (local control plane). */
export type WebhookClientConfig =
  | {
      readonly service: {
        readonly namespace: string;
        readonly name: string;
        readonly path: string;
        readonly port: number;
      };
      readonly caBundle?: string;
    }
  | { readonly url: string; readonly caBundle?: string };

/** Mutable on purpose: the value is handed to @kubernetes/client-node's own (mutable) types. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: {
    key: string;
    operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
    values?: string[];
  }[];
}

export interface WebhookConfigurationOptions {
  readonly name?: string;
  readonly clientConfig: WebhookClientConfig;
  /** Which namespaces are admitted; default: all except kube-system. */
  readonly namespaceSelector?: LabelSelector;
  /** Extra metadata.annotations, e.g. cert-manager's inject-ca-from. */
  readonly annotations?: Readonly<Record<string, string>>;
  /** At most 5 seconds: a slow webhook must not stall `kubectl apply`. Default 5. */
  readonly timeoutSeconds?: number;
}

const DEFAULT_NAMESPACE_SELECTOR: LabelSelector = {
  matchExpressions: [
    { key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system"] },
  ],
};

/** The plurals of every rule kind, from the registry, sorted for a stable manifest. */
export function ruleResources(): string[] {
  return ALL_RULE_KINDS.map((entry) => entry.plural).sort();
}

/** A CEL condition the API server evaluates before calling the webhook: all must hold. */
export interface MatchCondition {
  readonly name: string;
  readonly expression: string;
}

/** The fields of admissionregistration.k8s.io/v1 ValidatingWebhook this project sets. */
export interface ValidatingWebhook {
  name: string;
  clientConfig: WebhookClientConfig;
  admissionReviewVersions: string[];
  sideEffects: "None";
  timeoutSeconds: number;
  matchPolicy: "Equivalent";
  failurePolicy: "Fail" | "Ignore";
  namespaceSelector: LabelSelector;
  objectSelector?: LabelSelector;
  matchConditions?: MatchCondition[];
  rules: {
    apiGroups: string[];
    apiVersions: string[];
    operations: string[];
    resources: string[];
    scope: "Namespaced" | "*";
  }[];
}

export interface ValidatingWebhookConfiguration {
  apiVersion: "admissionregistration.k8s.io/v1";
  kind: "ValidatingWebhookConfiguration";
  metadata: { name: string; labels: Record<string, string>; annotations?: Record<string, string> };
  webhooks: ValidatingWebhook[];
}

/** What every webhook of the configuration shares. */
type WebhookCommon = Pick<
  ValidatingWebhook,
  | "sideEffects"
  | "matchPolicy"
  | "clientConfig"
  | "admissionReviewVersions"
  | "timeoutSeconds"
  | "namespaceSelector"
>;

function commonOf(options: WebhookConfigurationOptions): WebhookCommon {
  return {
    sideEffects: "None",
    matchPolicy: "Equivalent",
    clientConfig: options.clientConfig,
    admissionReviewVersions: ["v1"],
    timeoutSeconds: Math.min(options.timeoutSeconds ?? 5, 5),
    namespaceSelector: options.namespaceSelector ?? DEFAULT_NAMESPACE_SELECTOR,
  };
}

const ruleRules = (operations: string[]): ValidatingWebhook["rules"] => [
  {
    apiGroups: [RULE_GROUP],
    apiVersions: [RULE_VERSION],
    operations,
    resources: ruleResources(),
    scope: "Namespaced",
  },
];

/** Creates and updates of every rule kind. */
const rulesWebhook = (common: WebhookCommon): ValidatingWebhook => ({
  name: RULES_WEBHOOK_NAME,
  ...common,
  // Fail closed: a rule admitted without its checks could break the CNF or escape its bucket.
  failurePolicy: "Fail",
  matchConditions: [...RULE_WRITE_CONDITIONS],
  rules: ruleRules(["CREATE", "UPDATE"]),
});

const cnfWebhook = (common: WebhookCommon): ValidatingWebhook => ({
  name: CNF_WEBHOOK_NAME,
  ...common,
  // Open on outage: operating a CNF (rollback, scaling) must not depend on the webhook.
  failurePolicy: "Ignore",
  // Only CNF Deployments; the selector is matched against the old and the new object, so
  // removing the label on UPDATE is still reviewed.
  objectSelector: { matchExpressions: [{ key: PURPOSE_LABEL, operator: "Exists" }] },
  rules: [
    {
      apiGroups: ["apps"],
      apiVersions: ["v1"],
      operations: ["CREATE", "UPDATE"],
      resources: ["deployments"],
      scope: "Namespaced",
    },
  ],
});

const clusterLinkWebhook = (common: WebhookCommon): ValidatingWebhook => ({
  name: CLUSTERLINK_WEBHOOK_NAME,
  ...common,
  // Open on outage: the ClusterLink functions parse every spec again and mark a bad one
  // Stalled, so the webhook only gives earlier, clearer answers.
  failurePolicy: "Ignore",
  rules: [
    {
      apiGroups: [CLUSTERLINK_GROUP],
      apiVersions: [CLUSTERLINK_VERSION],
      operations: ["CREATE", "UPDATE"],
      resources: CLUSTERLINK_ADMISSION_KINDS.map(
        (kind) => CLUSTERLINK_KINDS[kind as ClusterLinkKind].plural,
      ).sort(),
      // PrivilegedAccessPolicy is cluster-scoped.
      scope: "*",
    },
  ],
});

/** Deletes of every rule kind in a bucket: the bucket policy. */
const ruleDeletesWebhook = (common: WebhookCommon): ValidatingWebhook => ({
  name: RULE_DELETES_WEBHOOK_NAME,
  ...common,
  // Fail closed: the bucket policy is authorization. Its reach is kept small instead (ADR 0010).
  failurePolicy: "Fail",
  objectSelector: { matchExpressions: [{ key: BUCKET_LABEL, operator: "Exists" }] },
  matchConditions: [...RULE_DELETE_CONDITIONS],
  rules: ruleRules(["DELETE"]),
});

/** Dry-run deletes of every rule kind: their plans. */
const ruleDeletePlansWebhook = (common: WebhookCommon): ValidatingWebhook => ({
  name: RULE_DELETE_PLANS_WEBHOOK_NAME,
  ...common,
  // Open on outage: a dry run without its plan is still the dry run the API server gives.
  failurePolicy: "Ignore",
  matchConditions: [...RULE_DELETE_PLAN_CONDITIONS],
  rules: ruleRules(["DELETE"]),
});

export function buildWebhookConfiguration(
  options: WebhookConfigurationOptions,
): ValidatingWebhookConfiguration {
  const common = commonOf(options);
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: {
      name: options.name ?? WEBHOOK_CONFIGURATION_NAME,
      labels: {
        "app.kubernetes.io/name": "validate-admission",
        "app.kubernetes.io/part-of": "sdewan",
      },
      ...(options.annotations ? { annotations: { ...options.annotations } } : {}),
    },
    webhooks: [
      rulesWebhook(common),
      cnfWebhook(common),
      clusterLinkWebhook(common),
      ruleDeletesWebhook(common),
      ruleDeletePlansWebhook(common),
    ],
  };
}

/** In-cluster deployment facts shared by the generated manifest and manifests/webhook/*.yaml. */
export const IN_CLUSTER = {
  namespace: "sdewan-system",
  service: "validate-admission",
  /** cert-manager Certificate whose CA is injected into caBundle. */
  certificate: "validate-admission-serving-cert",
} as const;

/** The generated manifests/webhook/validating-webhook-configuration.yaml. */
export function renderWebhookManifest(): string {
  const configuration = buildWebhookConfiguration({
    clientConfig: {
      service: { namespace: IN_CLUSTER.namespace, name: IN_CLUSTER.service, path: "/", port: 443 },
    },
    annotations: {
      // With cert-manager, its CA injector fills caBundle; without it, patch caBundle by hand
      // (manifests/webhook/README.md, "Self-signed").
      "cert-manager.io/inject-ca-from": `${IN_CLUSTER.namespace}/${IN_CLUSTER.certificate}`,
    },
  });
  return (
    "# Generated by `npm run gen:webhook` from shared/admission/webhook-config.ts and the rule\n" +
    "# registry (shared/kinds). Do not edit by hand: a unit test fails when this file drifts.\n" +
    stringify(configuration, { lineWidth: 0, aliasDuplicateObjects: false })
  );
}
