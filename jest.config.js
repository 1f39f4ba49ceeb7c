// Native ESM under jest: run with --experimental-vm-modules (see package.json scripts),
// transform TypeScript with SWC to ES modules, and map NodeNext-style "./x.js" imports back to "./x.ts".
const swc = [
  "@swc/jest",
  {
    jsc: { parser: { syntax: "typescript" }, target: "es2022" },
    module: { type: "es6" },
  },
];

const common = {
  extensionsToTreatAsEsm: [".ts"],
  transform: { "^.+\\.ts$": swc },
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  testEnvironment: "node",
  // faas-cli build's contexts hold copies of package.json and the sources (stack.yml).
  modulePathIgnorePatterns: ["<rootDir>/build/"],
};

/** @type {import('jest').Config} */
export default {
  projects: [
    { ...common, displayName: "unit", testMatch: ["<rootDir>/test/unit/**/*.test.ts"] },
    {
      ...common,
      displayName: "integration",
      testMatch: ["<rootDir>/test/integration/**/*.test.ts"],
      // One real kube-apiserver + etcd per run (dev/control-plane); each test uses its own namespace.
      globalSetup: "<rootDir>/test/integration/support/global-setup.ts",
      globalTeardown: "<rootDir>/test/integration/support/global-teardown.ts",
      // 30 s per test: one shared API server on a small machine (jest ignores a project testTimeout).
      setupFilesAfterEnv: ["<rootDir>/test/integration/support/timeout.ts"],
    },
    {
      ...common,
      displayName: "e2e",
      testMatch: ["<rootDir>/test/e2e/**/*.test.ts"],
      // The same control plane as the integration project: jest runs a globalSetup module once
      // per run however many projects name it. The e2e tests set longer timeouts of their own.
      globalSetup: "<rootDir>/test/integration/support/global-setup.ts",
      globalTeardown: "<rootDir>/test/integration/support/global-teardown.ts",
      setupFilesAfterEnv: ["<rootDir>/test/integration/support/timeout.ts"],
    },
  ],
};
