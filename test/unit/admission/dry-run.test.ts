// A dry run's plan in validate-admission (shared/admission/dry-run.ts): asked for only on an
// allowed dry run of a rule, with whether the requester may see CNF state (a SubjectAccessReview
// on the CNF credentials Secret), within the warning budget; a plan that fails never fails the
// dry run. The plan itself (shared/sync's preview) is stubbed here; its behaviour through the API
// server is test/integration/admission-dry-run.test.ts.
import { admit } from "../../../shared/admission/on-review.js";
import type { CnfStateAccess, DryRunPlanner } from "../../../shared/admission/dry-run.js";
import type { AdmissionReader } from "../../../shared/admission/observe.js";
import type { AdmissionResponseBody } from "../../../shared/admission/verdict.js";
import { objectOf, reviewBody, type ReviewSpec } from "./fixtures.js";

const silent = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };
const SECRET = { namespace: "sdewan-system", name: "sdewan-cnf-credentials" };

/** A reader that allows everything a rule review reads; `secretAnswer` for the SAR. */
function reader(secretAnswer: boolean | Error, asked: string[]): AdmissionReader {
  return {
    listCnfDeployments: () => Promise.resolve([]),
    getRule: () => Promise.resolve(null),
    listRules: () => Promise.resolve([]),
    listRoleBindings: () => Promise.resolve([]),
    listClusterRoleBindings: () => Promise.resolve([]),
    getRole: () => Promise.resolve(null),
    mayGetSecret: (user, namespace, name) => {
      asked.push(`${user.username} get ${namespace}/${name}`);
      return secretAnswer instanceof Error
        ? Promise.reject(secretAnswer)
        : Promise.resolve(secretAnswer);
    },
  };
}

class StubPlanner implements DryRunPlanner {
  readonly credentialsSecret = SECRET;
  readonly calls: { access: CnfStateAccess; budget: number }[] = [];
  constructor(
    private readonly answer: readonly string[] | Error = ["plan IpsecProposal p1: apply"],
  ) {}
  plan(_request: unknown, access: CnfStateAccess, budget: number): Promise<readonly string[]> {
    this.calls.push({ access, budget });
    return this.answer instanceof Error
      ? Promise.reject(this.answer)
      : Promise.resolve(this.answer);
  }
}

const PROPOSAL = { encryption_algorithm: "aes128", hash_algorithm: "sha256", dh_group: "modp2048" };
/** A review of an IpsecProposal (no references, no networks: allowed without reads). */
const proposal = (extra: Partial<ReviewSpec> = {}): ReviewSpec => ({
  operation: "CREATE",
  kind: "IpsecProposal",
  object: objectOf("p1", { sdewanPurpose: "cnf-a" }, PROPOSAL),
  ...extra,
});

async function review(
  spec: ReviewSpec,
  dryRun: boolean,
  planner: StubPlanner,
  secret: boolean | Error = true,
) {
  const body = reviewBody(spec) as { request: Record<string, unknown> };
  body.request["dryRun"] = dryRun;
  const asked: string[] = [];
  const reply = await admit(body, {
    log: silent,
    calls: { api: 0, cnf: 0 },
    reader: () => reader(secret, asked),
    planner,
  });
  return { response: (reply.body as AdmissionResponseBody).response, asked };
}

describe("a dry run's plan in validate-admission", () => {
  it("a normal review asks for no plan and no SubjectAccessReview", async () => {
    const planner = new StubPlanner();
    const { response, asked } = await review(proposal(), false, planner);
    expect(response.allowed).toBe(true);
    expect(response.warnings).toBeUndefined();
    expect(planner.calls).toEqual([]);
    expect(asked).toEqual([]);
  });

  it("an allowed dry run gets the plan as warnings, made knowing the requester may see CNF state", async () => {
    const planner = new StubPlanner();
    const { response, asked } = await review(proposal(), true, planner);
    expect(response).toMatchObject({ allowed: true, warnings: ["plan IpsecProposal p1: apply"] });
    expect(asked).toEqual(["alice get sdewan-system/sdewan-cnf-credentials"]);
    expect(planner.calls).toEqual([{ access: { allowed: true }, budget: 4096 }]);
  });

  it.each([
    [
      "may not get the credentials Secret",
      false,
      '"alice" may not get Secret sdewan-system/sdewan-cnf-credentials',
    ],
    [
      "the SubjectAccessReview fails: withheld (fails closed)",
      new Error("connection refused"),
      'whether "alice" may get Secret sdewan-system/sdewan-cnf-credentials could not be checked (SubjectAccessReview failed: connection refused)',
    ],
  ])("%s: the plan is made without CNF state, and says why", async (_title, secret, why) => {
    const planner = new StubPlanner();
    await review(proposal(), true, planner, secret);
    expect(planner.calls[0]?.access).toEqual({ allowed: false, why });
  });

  it("a plan that cannot be made is said in a warning; the dry run is still allowed", async () => {
    const { response } = await review(
      proposal(),
      true,
      new StubPlanner(new Error("API server gone")),
    );
    expect(response).toMatchObject({
      allowed: true,
      warnings: ["plan: could not be made: API server gone"],
    });
  });

  it("the budget is what the policies' own warnings leave of the API server's 4096 runes", async () => {
    const planner = new StubPlanner();
    // A rule without the purpose label is allowed with a warning (purposeWarning).
    await review(proposal({ object: objectOf("p1", {}, PROPOSAL) }), true, planner);
    const budget = planner.calls[0]?.budget ?? 0;
    expect(budget).toBeLessThan(4096);
    expect(budget).toBeGreaterThan(3900);
  });

  it.each<[string, ReviewSpec]>([
    [
      "a denied dry run (the spec is invalid)",
      proposal({
        object: objectOf("p1", { sdewanPurpose: "cnf-a" }, { ...PROPOSAL, dh_group: 7 }),
      }),
    ],
    [
      "a dry run of a CNF Deployment",
      {
        operation: "CREATE",
        kind: "Deployment",
        group: "apps",
        resource: "deployments",
        object: objectOf("cnf", { sdewanPurpose: "cnf-a" }, {}),
      },
    ],
  ])("%s gets no plan", async (_title, spec) => {
    const planner = new StubPlanner();
    await review(spec, true, planner);
    expect(planner.calls).toEqual([]);
  });
});
