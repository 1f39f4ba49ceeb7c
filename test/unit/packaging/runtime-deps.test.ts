// What `npm ci --omit=dev` installs in the image: the lockfile marks every package that only
// development needs as "dev", and npm leaves those out. Build tools must be among them.
import { readFileSync } from "node:fs";

interface LockPackage {
  readonly dev?: boolean;
  readonly optional?: boolean;
}

const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as {
  packages: Record<string, LockPackage>;
};
const installedInImage = (name: string): boolean => {
  const entry = lock.packages[`node_modules/${name}`];
  return entry !== undefined && entry.dev !== true;
};

describe("the image's production dependencies", () => {
  it.each(["tsx", "esbuild", "typescript", "jest", "eslint", "dependency-cruiser"])(
    "%s (a build or test tool) is not installed in the image",
    (tool) => {
      expect(lock.packages[`node_modules/${tool}`]).toBeDefined();
      expect(installedInImage(tool)).toBe(false);
    },
  );

  it.each(["pino", "prom-client", "zod", "yaml", "cloudevents"])(
    "%s (used at run time) is",
    (runtime) => {
      expect(installedInImage(runtime)).toBe(true);
    },
  );
});
