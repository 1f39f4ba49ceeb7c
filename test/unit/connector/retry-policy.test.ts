import {
  backoffDelay,
  classifySendResult,
  parseRetryAfter,
  planAfterFailure,
  type RetryPolicy,
  type SendResult,
} from "../../../connector/retry-policy.js";

const policy: RetryPolicy = {
  initialDelayMs: 100,
  maxDelayMs: 3_200,
  maxAttempts: 5,
  maxAgeMs: 60_000,
  retryAfterMaxMs: 30_000,
};

const answer = (status: number, retryAfter?: string): SendResult =>
  retryAfter === undefined
    ? { kind: "response", status }
    : { kind: "response", status, retryAfter };

describe("classifySendResult: which sink answers are retried (Knative's dispatcher rules)", () => {
  it.each([
    [200, "delivered"],
    [202, "delivered"],
    [204, "delivered"],
    [500, "retryable"],
    [502, "retryable"],
    [503, "retryable"],
    [504, "retryable"],
    [404, "retryable"],
    [408, "retryable"],
    [409, "retryable"],
    [429, "retryable"],
    [400, "rejected"],
    [401, "rejected"],
    [403, "rejected"],
    [413, "rejected"],
    [422, "rejected"],
    [301, "rejected"],
    [307, "rejected"],
  ])("HTTP %i is %s", (status, expected) => {
    expect(classifySendResult(answer(status))).toBe(expected);
  });

  it("retries a network error (no answer at all)", () => {
    expect(classifySendResult({ kind: "network-error", message: "ECONNREFUSED" })).toBe(
      "retryable",
    );
  });
});

describe("parseRetryAfter: delay-seconds and the three HTTP-date forms", () => {
  const now = Date.UTC(1994, 10, 6, 8, 49, 27); // 10 s before the RFC's example date

  it.each<[string, string | undefined, number | undefined]>([
    ["absent", undefined, undefined],
    ["delay-seconds", "120", 120_000],
    ["zero seconds", "0", 0],
    ["seconds with surrounding space", " 7 ", 7_000],
    ["a negative number", "-1", undefined],
    ["a fraction", "1.5", undefined],
    ["garbage", "soon", undefined],
    ["an empty value", "", undefined],
    ["IMF-fixdate 10 s ahead", "Sun, 06 Nov 1994 08:49:37 GMT", 10_000],
    ["obsolete RFC 850 date 10 s ahead", "Sunday, 06-Nov-94 08:49:37 GMT", 10_000],
    ["obsolete asctime date 10 s ahead", "Sun Nov  6 08:49:37 1994", 10_000],
    ["a date in the past", "Sun, 06 Nov 1994 08:00:00 GMT", 0],
    ["a date in another zone", "Sun, 06 Nov 1994 08:49:37 PST", undefined],
  ])("%s (%j) -> %j ms", (_title, header, expected) => {
    expect(parseRetryAfter(header, now)).toBe(expected);
  });
});

describe("backoffDelay: exponential with equal jitter", () => {
  it.each([
    [1, 100],
    [2, 200],
    [3, 400],
    [5, 1_600],
    [6, 3_200],
    [7, 3_200],
    [30, 3_200],
  ])(
    "after %i failed attempts the delay lies in [ceiling/2, ceiling] with ceiling %i",
    (failed, ceiling) => {
      expect(backoffDelay(failed, policy, () => 0)).toBe(ceiling / 2);
      expect(backoffDelay(failed, policy, () => 0.999999)).toBeLessThanOrEqual(ceiling);
      expect(backoffDelay(failed, policy, () => 0.999999)).toBeGreaterThan(ceiling * 0.99);
    },
  );

  it("spreads delays across the jitter range instead of synchronising retries", () => {
    const delays = new Set([0.1, 0.3, 0.5, 0.7, 0.9].map((r) => backoffDelay(4, policy, () => r)));
    expect(delays.size).toBe(5);
  });
});

describe("planAfterFailure", () => {
  const half = () => 0.5;
  const at = (attempts: number, result: SendResult, now = 1_000, observedAt = 0) =>
    planAfterFailure({ attempts, observedAt, now, result }, policy, half);

  it("dead-letters a rejected event after its single attempt", () => {
    expect(at(1, answer(422))).toEqual({ kind: "dead-letter", reason: "rejected" });
  });

  it("retries a 503 after the jittered backoff", () => {
    expect(at(1, answer(503))).toEqual({ kind: "retry", at: 1_075, delayMs: 75 });
  });

  it("dead-letters when the attempt budget is spent", () => {
    expect(at(5, answer(503))).toEqual({ kind: "dead-letter", reason: "attempts-exhausted" });
  });

  it("dead-letters when the next attempt would fall outside the age budget", () => {
    expect(at(2, answer(503), 59_990)).toEqual({ kind: "dead-letter", reason: "age-exhausted" });
  });

  it("waits at least as long as Retry-After asks", () => {
    expect(at(1, answer(503, "4"))).toEqual({ kind: "retry", at: 5_000, delayMs: 4_000 });
  });

  it("keeps its own backoff when Retry-After asks for less", () => {
    expect(at(4, answer(429, "0"))).toEqual({ kind: "retry", at: 1_600, delayMs: 600 });
  });

  it("caps Retry-After at retryAfterMax", () => {
    expect(at(1, answer(503, "3600"))).toEqual({ kind: "retry", at: 31_000, delayMs: 30_000 });
  });

  it("ignores Retry-After it cannot parse", () => {
    expect(at(1, answer(503, "later"))).toEqual({ kind: "retry", at: 1_075, delayMs: 75 });
  });
});
