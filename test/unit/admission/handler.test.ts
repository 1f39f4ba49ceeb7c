// validate-admission over HTTP (supertest) with an in-memory AdmissionReader: the HTTP contract
// (400 for malformed reviews, uid copied, denial format) and "reads only what the request needs".
// Behaviour against a real API server is in test/integration/admission*.test.ts.
import request from "supertest";
import { createValidateAdmission } from "../../../functions/validate-admission/index.js";
import type { AdmissionReader, ReadConsistency } from "../../../shared/admission/observe.js";
import type { ObservedRule } from "../../../shared/admission/snapshot.js";
import type { AdmissionResponseBody } from "../../../shared/admission/verdict.js";
import { Runtime, createFunctionApp, createLogger } from "../../../shared/runtime/index.js";
import { objectOf, reviewBody } from "./fixtures.js";

/**
 * Current state in `rules`; the API server's watch cache in `cachedRules` (the same unless a test
 * says the cache has not caught up yet). Reads are recorded with "(cached)" when from the cache.
 */
class MemoryReader implements AdmissionReader {
  readonly reads: string[] = [];
  constructor(
    private readonly rules: ObservedRule[] = [],
    private readonly cachedRules: ObservedRule[] = rules,
  ) {}
  private view(what: string, consistency: ReadConsistency = "consistent"): ObservedRule[] {
    this.reads.push(consistency === "cached" ? `${what} (cached)` : what);
    return consistency === "cached" ? this.cachedRules : this.rules;
  }
  listCnfDeployments(namespace: string, purpose: string, consistency?: ReadConsistency) {
    this.view(`deployments ${namespace} ${purpose}`, consistency);
    return Promise.resolve([]);
  }
  getRule(kind: { kind: string }, _namespace: string, name: string, consistency?: ReadConsistency) {
    const rules = this.view(`get ${kind.kind}/${name}`, consistency);
    return Promise.resolve(rules.find((r) => r.kind === kind.kind && r.name === name) ?? null);
  }
  listRules(kind: { kind: string }, _namespace: string, consistency?: ReadConsistency) {
    const rules = this.view(`list ${kind.kind}`, consistency);
    return Promise.resolve(rules.filter((r) => r.kind === kind.kind));
  }
  listRoleBindings(_namespace: string, consistency?: ReadConsistency) {
    this.view("rolebindings", consistency);
    return Promise.resolve([]);
  }
  listClusterRoleBindings(consistency?: ReadConsistency) {
    this.view("clusterrolebindings", consistency);
    return Promise.resolve([]);
  }
  getRole(_key: unknown, consistency?: ReadConsistency) {
    this.view("role", consistency);
    return Promise.resolve(null);
  }
  /** Secrets the requester may get; a name mapped to an Error makes the review fail. */
  readonly secrets = new Map<string, true | Error>();
  mayGetSecret(user: { username: string }, _namespace: string, name: string) {
    this.reads.push(`may ${user.username} get secret/${name}`);
    const answer = this.secrets.get(name);
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer === true);
  }
}

const answer = (res: { body: unknown }) => (res.body as AdmissionResponseBody).response;
const errorMessage = (res: { body: unknown }) => (res.body as { message: string }).message;

const quietRuntime = () => new Runtime({ logger: createLogger({ level: "silent" }) });

function appWith(reader: MemoryReader) {
  return createFunctionApp(createValidateAdmission({ reader: () => reader }), quietRuntime());
}

const purpose = { sdewanPurpose: "cnf-a" };
const ruleSpec = { policy: "balance1", proto: "tcp" };
const policy: ObservedRule = {
  kind: "Mwan3Policy",
  name: "balance1",
  purpose: "cnf-a",
  deleting: false,
  spec: { members: [{ network: "n1", metric: 1, weight: 1 }] },
};

describe("validate-admission over HTTP", () => {
  it("answers 400 with a message for a body that is not JSON", async () => {
    const res = await request(appWith(new MemoryReader()))
      .post("/")
      .set("content-type", "application/json")
      .send("{nope");
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain("not valid JSON");
  });

  it("answers 400 naming the field for a malformed AdmissionReview", async () => {
    const body = reviewBody({
      operation: "CREATE",
      kind: "Mwan3Rule",
      object: objectOf("r1", purpose, ruleSpec),
    });
    (body.request as Record<string, unknown>).operation = "PATCH";
    const res = await request(appWith(new MemoryReader())).post("/").send(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: "MalformedAdmissionReview" });
    expect(errorMessage(res)).toContain("request.operation");
  });

  it("denies a Secret reference when the SubjectAccessReview fails, and says so", async () => {
    const proposal = {
      encryption_algorithm: "aes128",
      hash_algorithm: "sha256",
      dh_group: "modp2048",
    };
    const reader = new MemoryReader([
      { kind: "IpsecProposal", name: "ike1", purpose: "cnf-a", deleting: false, spec: proposal },
    ]);
    reader.secrets.set("app-db", new Error("connect ECONNREFUSED 127.0.0.1:6443"));
    const spec = {
      remote: "%any",
      authentication_method: "psk",
      pre_shared_key_secret_ref: { name: "app-db", key: "password" },
      crypto_proposal: ["ike1"],
      connections: [
        { name: "c1", conn_type: "tunnel", mode: "start", local_subnet: "10.1.0.0/24" },
      ],
    };
    const body = reviewBody({
      operation: "CREATE",
      kind: "IpsecSite",
      object: objectOf("s1", purpose, spec),
    });
    const res = await request(appWith(reader)).post("/").send(body);
    expect(res.status).toBe(200);
    expect(answer(res)).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(answer(res).status?.message).toContain(
      'whether "alice" may get Secret "app-db" could not be checked (SubjectAccessReview failed: connect ECONNREFUSED',
    );
    expect(reader.reads).toContain("may alice get secret/app-db");
  });

  it("allows a valid rule, copying the uid, after reading only its policy", async () => {
    const reader = new MemoryReader([policy]);
    const body = reviewBody({
      operation: "CREATE",
      kind: "Mwan3Rule",
      object: objectOf("r1", purpose, ruleSpec),
    });
    const res = await request(appWith(reader)).post("/").send(body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "0b5f2a7e-0000-4000-8000-000000000001", allowed: true },
    });
    expect(reader.reads).toEqual(["get Mwan3Policy/balance1 (cached)"]);
  });

  it("needs no API client for a review that reads nothing", async () => {
    const noClient = createValidateAdmission({
      reader: () => {
        throw new Error("no API server configured");
      },
    });
    const body = reviewBody({
      operation: "CREATE",
      kind: "IpsecProposal",
      object: objectOf("p1", purpose, {
        encryption_algorithm: "aes128",
        hash_algorithm: "sha256",
        dh_group: "modp2048",
      }),
    });
    const res = await request(createFunctionApp(noClient, quietRuntime())).post("/").send(body);
    expect(res.status).toBe(200);
    expect(answer(res).allowed).toBe(true);
  });

  it("answers 500 when the API server cannot be read, so failurePolicy decides", async () => {
    const noClient = createValidateAdmission({
      reader: () => {
        throw new Error("no API server configured");
      },
    });
    const body = reviewBody({
      operation: "CREATE",
      kind: "Mwan3Rule",
      object: objectOf("r1", purpose, ruleSpec),
    });
    const res = await request(createFunctionApp(noClient, quietRuntime())).post("/").send(body);
    expect(res.status).toBe(500);
  });

  it("denies a kind it does not handle with status 400", async () => {
    const body = reviewBody({
      operation: "CREATE",
      kind: "Widget",
      group: "example.com",
      object: objectOf("w", {}),
    });
    const res = await request(appWith(new MemoryReader())).post("/").send(body);
    expect(res.status).toBe(200);
    expect(answer(res)).toMatchObject({ allowed: false, status: { code: 400 } });
    expect(answer(res).status?.message).toContain('policy "supported-kinds"');
  });

  it("denies a rule whose object fails schema parsing with 422, without reading anything", async () => {
    const reader = new MemoryReader();
    const body = reviewBody({
      operation: "CREATE",
      kind: "Mwan3Rule",
      object: objectOf("r1", purpose, { policy: 7 }),
    });
    const res = await request(appWith(reader)).post("/").send(body);
    expect(answer(res)).toMatchObject({
      allowed: false,
      status: { code: 422, reason: "Invalid" },
    });
    expect(answer(res).status?.message).toContain("spec.policy");
    expect(reader.reads).toEqual([]);
  });

  it("reads bindings only for a labelled object and a non-admin user", async () => {
    const labelled = objectOf("r1", { ...purpose, "sdewan-bucket-type": "basic" }, ruleSpec);
    const asAdmin = new MemoryReader([policy]);
    await request(appWith(asAdmin))
      .post("/")
      .send(
        reviewBody({
          operation: "CREATE",
          kind: "Mwan3Rule",
          object: labelled,
          groups: ["system:masters"],
        }),
      );
    expect(asAdmin.reads.filter((read) => read.startsWith("rolebindings"))).toEqual([]);
    const asUser = new MemoryReader([policy]);
    const res = await request(appWith(asUser))
      .post("/")
      .send(reviewBody({ operation: "CREATE", kind: "Mwan3Rule", object: labelled }));
    expect(asUser.reads).toEqual(
      expect.arrayContaining(["rolebindings (cached)", "rolebindings", "clusterrolebindings"]),
    );
    expect(answer(res).status?.code).toBe(403);
  });

  it("reads nothing to delete a rule outside a bucket, referenced or not (ADR 0010)", async () => {
    const reader = new MemoryReader([
      { kind: "Mwan3Rule", name: "r1", purpose: "cnf-a", deleting: false, spec: ruleSpec },
    ]);
    const body = reviewBody({
      operation: "DELETE",
      kind: "Mwan3Policy",
      oldObject: objectOf("balance1", purpose, policy.spec),
    });
    const res = await request(appWith(reader)).post("/").send(body);
    expect(reader.reads).toEqual([]);
    expect(answer(res).allowed).toBe(true);
  });
});

describe("validate-admission reads the watch cache first and denies only on current state", () => {
  const createRule = () =>
    reviewBody({
      operation: "CREATE",
      kind: "Mwan3Rule",
      object: objectOf("r1", purpose, ruleSpec),
    });

  it("allows a rule whose policy was created a moment ago, before the cache has it", async () => {
    const reader = new MemoryReader([policy], []);
    const res = await request(appWith(reader)).post("/").send(createRule());
    expect(answer(res).allowed).toBe(true);
    expect(reader.reads).toEqual(["get Mwan3Policy/balance1 (cached)", "get Mwan3Policy/balance1"]);
  });

  it("denies a rule whose policy is missing from the cache and from the current state", async () => {
    const reader = new MemoryReader([], []);
    const res = await request(appWith(reader)).post("/").send(createRule());
    expect(answer(res)).toMatchObject({ allowed: false, status: { code: 422 } });
    expect(answer(res).status?.message).toContain('policy "rule-dependencies"');
    expect(reader.reads).toEqual(["get Mwan3Policy/balance1 (cached)", "get Mwan3Policy/balance1"]);
  });
});
