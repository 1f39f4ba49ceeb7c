import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "build/", ".cluster/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["*.js", "*.cjs", "dev/netpol/launch.mjs"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/explicit-module-boundary-types": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
      complexity: ["warn", 12],
      "max-depth": ["error", 4],
      "max-params": ["error", 5],
    },
  },
  {
    // One way to the API per capability (docs/overview.md, "One shape"): only its store or
    // reader, and the dry-run preview's boundary, hold the client.
    files: ["shared/{sync,egress,netpol,clusterlink,admission}/*.ts"],
    ignores: [
      "shared/*/kube-store.ts",
      "shared/*/kube-reader.ts",
      "shared/netpol/agent-store.ts",
      "shared/sync/preview.ts",
    ],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          paths: ["../kube/index.js", "../kube/client.js"].map((name) => ({
            name,
            importNames: ["KubeClient", "createKubeClient", "defaultKubeClient"],
            message: "Read and write through the capability's store (store.ts, kube-store.ts).",
          })),
        },
      ],
    },
  },
  {
    files: ["test/**/*.ts", "bench/**/*.ts", "dev/**/*.ts"],
    rules: { "@typescript-eslint/explicit-module-boundary-types": "off", complexity: "off" },
  },
  {
    // A process's first localeCompare loads ICU's collation data: ~2.7 MiB of RSS for the rest of
    // its life, a function's idle memory over its target (issue 28 item 5). Sort by code point.
    files: ["shared/**/*.ts", "functions/**/*.ts", "connector/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.property.name='localeCompare']",
          message: "Use compareStrings (shared/core/order.ts): localeCompare loads ICU collation.",
        },
      ],
    },
  },
  {
    // dev/netpol/launch.mjs: plain JavaScript so `npm run netpol` starts without a compiler.
    files: ["*.js", "*.cjs", "dev/netpol/launch.mjs"],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // dependency-cruiser reads its configuration as CommonJS.
    files: ["*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { module: "writable" } },
  },
);
