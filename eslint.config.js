import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", ".cluster/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["*.js"] },
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
    // Import direction: rules is the bottom layer and knows nothing of I/O.
    files: ["shared/rules/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            "../kube/*",
            "../cnf/*",
            "../runtime/*",
            "../sync/*",
            "../admission/*",
            "../egress/*",
            "express",
            "@kubernetes/client-node",
          ],
        },
      ],
    },
  },
  {
    // Pure planners import no client, no HTTP framework.
    files: ["shared/**/plan*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: ["express", "cloudevents", "@kubernetes/client-node", "../kube/*", "../cnf/*"],
        },
      ],
    },
  },
  {
    files: ["test/**/*.ts", "bench/**/*.ts", "dev/**/*.ts"],
    rules: { "@typescript-eslint/explicit-module-boundary-types": "off", complexity: "off" },
  },
  {
    files: ["*.js"],
    ...tseslint.configs.disableTypeChecked,
  },
);
