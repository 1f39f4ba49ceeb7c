// Whether the tests run in CI (.ci/run sets CI=true): there, a tool .ci/run builds or installs
// must be present, and a test that would skip without it fails instead.
export const inCi = process.env["CI"] === "true" || process.env["CI"] === "1";
