// `npm ci` refuses a lockfile that lacks any optional dependency a locked package declares, even
// one for another platform (it reports "Missing: @swc/core-darwin-arm64@... from lock file"). A
// lock written by an npm that could not resolve those (a registry mirror serving linux-x64 builds
// only) looks fine to `npm install` and breaks the newcomer's and CI's `npm ci`.
import { readFileSync } from "node:fs";

interface LockPackage {
  readonly version?: string;
  readonly link?: boolean;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly optionalDependencies?: Readonly<Record<string, string>>;
}

const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as {
  lockfileVersion: number;
  packages: Record<string, LockPackage>;
};

/** Node's lookup from a lock path: its own node_modules, then each ancestor's, then the top. */
const resolve = (from: string, name: string): LockPackage | undefined => {
  let base = from;
  for (;;) {
    const found = lock.packages[`${base === "" ? "" : `${base}/`}node_modules/${name}`];
    if (found !== undefined) return found;
    if (base === "") return undefined;
    const cut = base.lastIndexOf("/node_modules/");
    base = cut === -1 ? "" : base.slice(0, cut);
  }
};

describe("package-lock.json", () => {
  it("is a v3 lock (what npm 11 writes)", () => {
    expect(lock.lockfileVersion).toBe(3);
  });

  it("locks every optional dependency of every locked package, all platforms, as npm ci needs", () => {
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        if (resolve(path, name) === undefined) missing.push(`${path || "<root>"} -> ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("locks every regular dependency too", () => {
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (entry.link === true) continue;
      for (const name of Object.keys(entry.dependencies ?? {})) {
        if (resolve(path, name) === undefined) missing.push(`${path || "<root>"} -> ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
