// Jest globalSetup of the integration project: starts the run's control plane (see lifecycle.ts).
// Jest loads this file through require() with its own transform and without moduleNameMapper, so
// NodeNext-style "./x.js" imports of .ts files would not resolve here: lifecycle.ts (and all it
// imports) is loaded through tsx instead, and this file imports nothing local at run time.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { tsImport } from "tsx/esm/api";
import type * as Lifecycle from "./lifecycle.js";

export default async function globalSetup(
  _global: unknown,
  project: { rootDir: string },
): Promise<void> {
  const file = path.join(project.rootDir, "test", "integration", "support", "lifecycle.ts");
  const lifecycle = (await tsImport(file, pathToFileURL(file).href)) as typeof Lifecycle;
  await lifecycle.setUp();
}
