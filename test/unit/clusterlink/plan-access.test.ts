// Access decisions as upstream orders them (reference B.6): the privileged tier first, deny
// before allow in each tier, only AccessPolicies of the Import/Export's namespace, default deny.
import {
  ATTRIBUTES,
  decideAccess,
  DEFAULT_DENY,
  type AccessRequest,
  type LivePolicy,
} from "../../../shared/clusterlink/plan-access.js";

const everyone = [{ workloadSelector: {} }];
const policy = (
  name: string,
  action: "allow" | "deny",
  options: { privileged?: boolean; namespace?: string; from?: LivePolicy["spec"]["from"] } = {},
): LivePolicy => ({
  name: options.privileged ? name : `${options.namespace ?? "app"}/${name}`,
  privileged: options.privileged ?? false,
  namespace: options.privileged ? "" : (options.namespace ?? "app"),
  spec: { action, from: options.from ?? everyone, to: everyone },
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
      "workloadSets are not supported: they select nothing",
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
