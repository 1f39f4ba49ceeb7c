import { matchesWildcard } from "../../../shared/admission/wildcard.js";

describe("matchesWildcard", () => {
  it.each([
    ["mwan3rules", "mwan3rules", true],
    ["mwan3rules", "mwan3rule", false],
    ["mwan3rule", "mwan3rules", false],
    ["*", "", true],
    ["*", "anything", true],
    ["firewall*", "firewallzones", true],
    ["firewall*", "mwan3rules", false],
    ["*rules", "firewallrules", true],
    ["*rules", "firewallrulesx", false],
    ["app-?ntent", "app-intent", true],
    ["app-?ntent", "app-ntent", false],
    ["a*b*c", "aXXbYYc", true],
    ["a*b*c", "aXXbYY", false],
    ["?", "", false],
    ["", "", true],
    ["", "a", false],
    ["App-intent", "app-intent", false],
    ["a.c", "abc", false],
  ])("pattern %j against %j is %s", (pattern, text, expected) => {
    expect(matchesWildcard(pattern, text)).toBe(expected);
  });

  it("stays fast on patterns that would backtrack badly as a regex", () => {
    const started = performance.now();
    expect(matchesWildcard("*a*a*a*a*a*a*a*a*b", "a".repeat(5000))).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
