// `npm run demo` on a fresh clone builds kube-apiserver and etcd first (~30 min cold): the build
// script's progress (stderr) must reach the demo's output as it comes, and a quiet stretch must
// still be said to run. Fake build scripts stand in for the cold build: each waits until the demo
// has said the line under test, which proves the line came while the build ran.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildControlPlane } from "../../../dev/demo/build.js";
import { executable, gate } from "./fakes.js";

let dir = "";
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "demo-build-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A build script that says `before`, then waits for the gate and prints its result. */
function blockingScript(before: string): { script: string; release: () => void } {
  const { fifo, release } = gate(dir);
  const script = executable(
    path.join(dir, "build.sh"),
    [
      `exec 3<>"${fifo}"`,
      before,
      'if read -r -t 20 -u 3 _; then echo "/cache/kube"; else echo "never released"; fi',
    ].join("\n"),
  );
  return { script, release };
}

describe("the demo's control-plane build step", () => {
  it("says the real build script's progress lines (here: binaries given, nothing to build)", async () => {
    const assets = path.join(dir, "assets");
    for (const name of ["kube-apiserver", "etcd"]) executable(path.join(assets, name), "");
    const env: NodeJS.ProcessEnv = { ...process.env, KUBEBUILDER_ASSETS: assets };
    delete env["TEST_ASSET_KUBE_APISERVER"];
    delete env["TEST_ASSET_ETCD"];
    const said: string[] = [];

    await expect(buildControlPlane({ say: (l) => said.push(l), env })).resolves.toBe(assets);
    expect(said).toEqual([
      `[control-plane build] using KUBEBUILDER_ASSETS=${assets}; nothing to build`,
    ]);
  });

  it("says each progress line while the build still runs", async () => {
    const { script, release } = blockingScript(
      'echo "[control-plane build] etcd: 12/700 packages compiled (0m30s elapsed)" >&2',
    );
    const said: string[] = [];
    const say = (line: string) => {
      said.push(line);
      if (line.includes("12/700")) release();
    };

    await expect(buildControlPlane({ say, script })).resolves.toBe("/cache/kube");
    expect(said).toEqual(["[control-plane build] etcd: 12/700 packages compiled (0m30s elapsed)"]);
  }, 30_000);

  it("says the build still runs, with the time elapsed, when the script is quiet", async () => {
    const { script, release } = blockingScript(": quiet");
    const said: string[] = [];
    const say = (line: string) => {
      said.push(line);
      release();
    };

    await expect(buildControlPlane({ say, script, everyMs: 20 })).resolves.toBe("/cache/kube");
    expect(said[0]).toMatch(/^control-plane build: still running, \dm\d\ds elapsed$/);
  }, 30_000);

  it("fails saying how, with the script's last lines", async () => {
    const script = executable(
      path.join(dir, "build.sh"),
      'echo "[control-plane build] etcd: go build failed" >&2\nexit 3\n',
    );
    const said: string[] = [];

    const build = buildControlPlane({ say: (l) => said.push(l), script });
    await expect(build).rejects.toThrow(
      /exit code 3.*\n\[control-plane build\] etcd: go build failed/,
    );
    expect(said).toEqual(["[control-plane build] etcd: go build failed"]);
  });
});
