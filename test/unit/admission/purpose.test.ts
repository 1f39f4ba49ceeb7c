import {
  planImmutablePurpose,
  planOneCnfPerPurpose,
} from "../../../shared/admission/plan-purpose.js";
import type { ObservedCnf } from "../../../shared/admission/snapshot.js";
import { objectOf, requestOf } from "./fixtures.js";

const purpose = (value: string) => ({ sdewanPurpose: value });

describe("planImmutablePurpose", () => {
  it.each([
    ["unchanged", purpose("cnf-a"), purpose("cnf-a"), true],
    ["changed", purpose("cnf-a"), purpose("cnf-b"), false],
    ["removed", purpose("cnf-a"), {}, false],
    ["added", {}, purpose("cnf-b"), false],
    ["absent on both sides", {}, {}, true],
  ])("UPDATE with sdewanPurpose %s is allowed=%s", (_title, before, after, allowed) => {
    const request = requestOf({
      operation: "UPDATE",
      kind: "FirewallZone",
      oldObject: objectOf("z1", before),
      object: objectOf("z1", after),
    });
    expect(planImmutablePurpose(request, false).allowed).toBe(allowed);
  });

  it("tells a CNF owner to recreate the Deployment", () => {
    const request = requestOf({
      operation: "UPDATE",
      kind: "Deployment",
      group: "apps",
      oldObject: objectOf("cnf", purpose("cnf-a")),
      object: objectOf("cnf", purpose("cnf-b")),
    });
    const verdict = planImmutablePurpose(request, true);
    expect(verdict).toMatchObject({ allowed: false, code: 422, policy: "immutable-purpose" });
    expect(!verdict.allowed && verdict.reason).toContain(
      'was "cnf-a", the update makes it "cnf-b"',
    );
    expect(!verdict.allowed && verdict.fix).toContain("delete this Deployment");
  });

  it("does not apply to CREATE", () => {
    const request = requestOf({
      operation: "CREATE",
      kind: "Mwan3Rule",
      object: objectOf("r", {}),
    });
    expect(planImmutablePurpose(request, false).allowed).toBe(true);
  });
});

describe("planOneCnfPerPurpose", () => {
  const createCnf = (name: string) =>
    requestOf({
      operation: "CREATE",
      kind: "Deployment",
      group: "apps",
      object: objectOf(name, purpose("cnf-a")),
    });
  const existing = (name: string, deleting = false): ObservedCnf => ({ name, deleting });

  it("allows the first CNF for a purpose", () => {
    expect(planOneCnfPerPurpose(createCnf("cnf-1"), []).allowed).toBe(true);
  });

  it("denies a second CNF with the same purpose, naming the first", () => {
    const verdict = planOneCnfPerPurpose(createCnf("cnf-2"), [existing("cnf-1")]);
    expect(verdict).toMatchObject({ allowed: false, code: 409, policy: "one-cnf-per-purpose" });
    expect(!verdict.allowed && verdict.reason).toContain('Deployment "cnf-1" already has it');
  });

  it("allows replacing a CNF that is terminating, with a warning", () => {
    const verdict = planOneCnfPerPurpose(createCnf("cnf-2"), [existing("cnf-1", true)]);
    expect(verdict.allowed).toBe(true);
    expect(verdict.warnings[0]).toContain('"cnf-1"');
  });

  it("lets an UPDATE of a pre-existing duplicate through with a warning", () => {
    const request = requestOf({
      operation: "UPDATE",
      kind: "Deployment",
      group: "apps",
      oldObject: objectOf("cnf-1", purpose("cnf-a")),
      object: objectOf("cnf-1", purpose("cnf-a")),
    });
    const verdict = planOneCnfPerPurpose(request, [existing("cnf-1"), existing("cnf-2")]);
    expect(verdict.allowed).toBe(true);
    expect(verdict.warnings[0]).toContain("more than one CNF Deployment");
  });

  it("ignores Deployments without the purpose label", () => {
    const request = requestOf({
      operation: "CREATE",
      kind: "Deployment",
      group: "apps",
      object: objectOf("web", {}),
    });
    expect(planOneCnfPerPurpose(request, [existing("cnf-1")]).allowed).toBe(true);
  });
});
