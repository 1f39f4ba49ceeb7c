// The node scenarios (test/node): one real node per run (dev/node), root needed; `npm run test:node`.
// Separate from `npm test` because it needs root and ~10 min; .ci/run runs both.
import base from "./jest.config.js";

const common = base.projects[0];
/** @type {import('jest').Config} */
export default {
  ...common,
  displayName: "node",
  testMatch: ["<rootDir>/test/node/**/*.test.ts"],
  maxWorkers: 1,
};
