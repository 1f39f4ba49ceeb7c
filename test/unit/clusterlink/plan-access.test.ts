// Access decisions as upstream orders them (reference B.6): the privileged tier first, deny
// before allow in each tier, only AccessPolicies of the Import/Export's namespace, default deny.
// What cannot be evaluated fails closed: a deny for what it could match, an allow for nothing.
import {
  ATTRIBUTES,
  compilePolicy,
  decideAccess,
  DEFAULT_DENY,
  type AccessRequest,
  type LivePolicy,
} from "../../../shared/clusterlink/plan-access.js";

const everyone = [{ workloadSelector: {} }];
const policy = (
  name: string,
  action: "allow" | "deny",
  options: { privileged?: boolean; namespace?: string; from?: unknown; to?: unknown } = {},
): LivePolicy =>
  compilePolicy({
    name: options.privileged ? name : `${options.namespace ?? "app"}/${name}`,
    privileged: options.privileged ?? false,
    namespace: options.privileged ? "" : (options.namespace ?? "app"),
    spec: { action, from: options.from ?? everyone, to: options.to ?? everyone },
  });

const request: AccessRequest = {
  source: {
    [ATTRIBUTES.clientNamespace]: "app",
    [`${ATTRIBUTES.clientLabelPrefix}tier`]: "web",
    [ATTRIBUTES.peerName]: "east",
  },
  destination: { [ATTRIBUTES.exportName]: "db", [ATTRIBUTES.exportNamespace]: "data" },
  namespace: "app",
};

const fromTier = (tier: string) => [
  { workloadSelector: { matchLabels: { [`${ATTRIBUTES.clientLabelPrefix}tier`]: tier } } },
];

describe("decideAccess", () => {
  it.each<[string, LivePolicy[], string, string]>([
    ["no policy: default deny", [], "deny", DEFAULT_DENY],
    ["a namespace allow", [policy("allow-all", "allow")], "allow", "app/allow-all"],
    [
      "deny before allow in the namespace tier",
      [policy("allow-all", "allow"), policy("no-web", "deny", { from: fromTier("web") })],
      "deny",
      "app/no-web",
    ],
    [
      "Regulatory Compliance: a privileged deny beats a namespace allow",
      [policy("allow-all", "allow"), policy("compliance", "deny", { privileged: true })],
      "deny",
      "compliance",
    ],
    [
      "a privileged allow decides before a namespace deny",
      [
        policy("no-web", "deny", { from: fromTier("web") }),
        policy("ops", "allow", { privileged: true }),
      ],
      "allow",
      "ops",
    ],
    [
      "deny before allow in the privileged tier",
      [policy("ops", "allow", { privileged: true }), policy("block", "deny", { privileged: true })],
      "deny",
      "block",
    ],
    [
      "a privileged policy that does not match leaves the namespace tier to decide",
      [
        policy("db-only", "deny", { privileged: true, from: fromTier("db") }),
        policy("allow-all", "allow"),
      ],
      "allow",
      "app/allow-all",
    ],
    [
      "AccessPolicies of another namespace do not count",
      [policy("allow-all", "allow", { namespace: "other" })],
      "deny",
      DEFAULT_DENY,
    ],
    [
      "a selector that does not match the source does not apply",
      [policy("db-only", "allow", { from: fromTier("db") })],
      "deny",
      DEFAULT_DENY,
    ],
    [
      "workloadSets are not supported: an allow with them allows nothing",
      [policy("sets", "allow", { from: [{ workloadSets: ["web"] }] })],
      "deny",
      DEFAULT_DENY,
    ],
  ])("%s", (_title, policies, action, deciding) => {
    expect(decideAccess(policies, request)).toMatchObject({ action, policy: deciding });
  });

  it("the answer does not depend on the order policies are listed in", () => {
    const policies = [
      policy("b-allow", "allow"),
      policy("a-allow", "allow"),
      policy("z-deny", "deny"),
    ];
    const reversed = [...policies].reverse();
    expect(decideAccess(policies, request)).toEqual(decideAccess(reversed, request));
    expect(decideAccess(policies, request).policy).toBe("app/z-deny");
  });
});

const inWithoutValues = [
  { workloadSelector: { matchExpressions: [{ key: ATTRIBUTES.clientNamespace, operator: "In" }] } },
];
const badKey = [{ workloadSelector: { matchLabels: { "not a key!": "x" } } }];
const toExport = (name: string) => [
  { workloadSelector: { matchLabels: { [ATTRIBUTES.exportName]: name } } },
];

describe("decideAccess: what cannot be evaluated fails closed and says so", () => {
  it.each<[string, LivePolicy[]]>([
    ["`In` with no values", [policy("bad", "deny", { from: inWithoutValues })]],
    ["a bad label key", [policy("bad", "deny", { from: badKey })]],
    ["workloadSets (unsupported)", [policy("bad", "deny", { from: [{ workloadSets: ["x"] }] })]],
    [
      "both workloadSets and a selector",
      [policy("bad", "deny", { from: [{ workloadSets: ["x"], workloadSelector: {} }] })],
    ],
    ["`from` that is not a list", [policy("bad", "deny", { from: "everyone" })]],
  ])("a deny policy with %s beats an allow-everyone policy", (_title, bad) => {
    const decision = decideAccess([policy("allow-all", "allow"), ...bad], request);
    expect(decision).toMatchObject({ action: "deny", policy: "app/bad", failedClosed: true });
    expect(decision.message).toMatch(/cannot be evaluated/);
  });

  it("a policy whose action is neither allow nor deny counts as a deny", () => {
    const odd = compilePolicy({
      name: "app/odd",
      privileged: false,
      namespace: "app",
      spec: { action: "permit", from: everyone, to: everyone },
    });
    expect(odd.problems).toEqual(['spec.action: "permit" is neither allow nor deny']);
    expect(decideAccess([policy("allow-all", "allow"), odd], request)).toMatchObject({
      action: "deny",
      policy: "app/odd",
      failedClosed: true,
    });
  });

  it("an invalid deny fails closed only for what it could match: its valid side still filters", () => {
    const bad = policy("bad", "deny", { from: inWithoutValues, to: toExport("other") });
    expect(decideAccess([policy("allow-all", "allow"), bad], request)).toEqual({
      action: "allow",
      policy: "app/allow-all",
      tier: "namespaced",
    });
  });

  it("a definite deny is named before one that failed closed", () => {
    const bad = policy("a-bad", "deny", { from: badKey });
    expect(decideAccess([bad, policy("z-deny", "deny")], request)).toEqual({
      action: "deny",
      policy: "app/z-deny",
      tier: "namespaced",
      unevaluable: ["app/a-bad"],
    });
  });

  it("an invalid allow allows nothing", () => {
    expect(decideAccess([policy("bad", "allow", { from: inWithoutValues })], request)).toEqual({
      action: "deny",
      policy: DEFAULT_DENY,
      tier: "default",
      unevaluable: ["app/bad"],
    });
  });

  describe("attributes nobody knows yet (a Peer's labels before its first heartbeat)", () => {
    const region = (value: string) => [
      { workloadSelector: { matchLabels: { [`${ATTRIBUTES.peerLabelPrefix}region`]: value } } },
    ];
    const unknown = [{ prefix: ATTRIBUTES.peerLabelPrefix, why: "labels of Peer east unknown" }];

    it("a deny on them fails closed, naming why", () => {
      const decision = decideAccess(
        [policy("allow-all", "allow"), policy("no-us", "deny", { from: region("us") })],
        { ...request, unknown },
      );
      expect(decision).toMatchObject({ action: "deny", policy: "app/no-us", failedClosed: true });
      expect(decision.message).toContain("labels of Peer east unknown");
    });

    it("an allow on them allows nothing", () => {
      const decision = decideAccess([policy("eu-only", "allow", { from: region("eu") })], {
        ...request,
        unknown,
      });
      expect(decision.policy).toBe(DEFAULT_DENY);
    });

    it("a deny whose known requirements already fail does not apply", () => {
      const from = [
        {
          workloadSelector: {
            matchLabels: {
              [`${ATTRIBUTES.peerLabelPrefix}region`]: "us",
              [ATTRIBUTES.clientNamespace]: "elsewhere",
            },
          },
        },
      ];
      const decision = decideAccess(
        [policy("allow-all", "allow"), policy("no-us", "deny", { from })],
        { ...request, unknown },
      );
      expect(decision.policy).toBe("app/allow-all");
    });
  });
});
