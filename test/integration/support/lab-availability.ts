// Whether the packet lab (packet-lab.ts) can run here, without side effects, so the CI guard test
// (test/unit/packaging/ci-cannot-skip.test.ts) can ask it for any case.
import { inCi } from "../../support/in-ci.js";

/**
 * Whether the lab can run: it needs root (network namespaces, veths, nftables). Outside CI it
 * is skipped without, saying why; in CI (CI=true) that cannot be skipped: it throws.
 */
export function labAvailability(
  options: { readonly ci: boolean; readonly root: boolean } = {
    ci: inCi,
    root: process.getuid?.() === 0,
  },
): { readonly skip?: string } {
  if (options.root) return {};
  const why = "the packet lab needs root (network namespaces, veths, nftables)";
  if (options.ci) throw new Error(`CI=true, so this cannot be skipped: ${why}`);
  return { skip: why };
}
