/**
 * Whole-string wildcard match for bucket-permission patterns: `*` matches any run of characters
 * (also none), `?` exactly one; every other character matches itself, case-sensitively.
 */
export function matchesWildcard(pattern: string, text: string): boolean {
  // Iterative two-pointer match with backtracking to the last `*`: linear in practice, no regex
  // (a pattern comes from a Role annotation, so it must not be able to cause catastrophic backtracking).
  let p = 0;
  let t = 0;
  let starAt = -1;
  let resumeText = 0;
  while (t < text.length) {
    const wanted = pattern[p];
    if (wanted === "?" || (wanted !== undefined && wanted !== "*" && wanted === text[t])) {
      p += 1;
      t += 1;
    } else if (wanted === "*") {
      starAt = p;
      resumeText = t;
      p += 1;
    } else if (starAt >= 0) {
      p = starAt + 1;
      resumeText += 1;
      t = resumeText;
    } else {
      return false;
    }
  }
  while (pattern[p] === "*") p += 1;
  return p === pattern.length;
}
