// dev/control-plane/build.sh on a cold machine is never silent for more than 30 s: not while
// `go list` downloads modules, not while another build holds the lock (the compile has had its
// heartbeat since the start). The real script runs with an empty cache, a fake `go` and a 1 s
// heartbeat; each fake waits until the line under test was said.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildScript } from "../../../dev/control-plane/binaries.js";
import { buildControlPlane } from "../../../dev/demo/build.js";
import { executable, gate } from "./fakes.js";

let dir = "";
let holder: ChildProcess | undefined;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "control-plane-build-"));
});
afterEach(() => {
  holder?.kill();
  holder = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** The real build.sh with an empty cache and `go` faked; progress every second, not 30. */
function coldEnvironment(fakeGo: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    XDG_CACHE_HOME: path.join(dir, "cache"),
    GO: fakeGo,
    GO_TOOL_HEARTBEAT_S: "1",
  };
  for (const name of ["KUBEBUILDER_ASSETS", "TEST_ASSET_KUBE_APISERVER", "TEST_ASSET_ETCD"]) {
    delete env[name];
  }
  return env;
}

/** `go list` waits for the gate (a cold module download); `go build -v` writes a binary. */
function fakeGo(fifo: string): string {
  return executable(
    path.join(dir, "go"),
    [
      'case "$1" in',
      `  list) exec 3<>"${fifo}"; read -r -t 20 -u 3 _; printf 'pkg/a\\npkg/b\\n' ;;`,
      '  build) out=""; prev=""; for a in "$@"; do [[ $prev == -o ]] && out="$a"; prev="$a"; done',
      '    echo pkg/a >&2; printf \'#!/bin/sh\\necho fake\\n\' >"$out"; chmod +x "$out" ;;',
      "esac",
    ].join("\n"),
  );
}

const cacheDir = (env: NodeJS.ProcessEnv): string =>
  execFileSync("bash", [buildScript, "--print-dir"], { env, encoding: "utf8" }).trim();

describe("build.sh, cold, is never silent", () => {
  it("says it is still resolving and downloading modules while go list is quiet", async () => {
    const { fifo, release } = gate(dir);
    const env = coldEnvironment(fakeGo(fifo));
    const said: string[] = [];
    const say = (line: string) => {
      said.push(line);
      if (line.includes("still resolving")) release();
    };

    await expect(buildControlPlane({ say, env })).resolves.toBe(cacheDir(env));
    const still =
      /^\[control-plane build\] (etcd|kube-apiserver): still resolving and downloading modules \(\dm\d\ds elapsed\)$/;
    expect(said.filter((l) => still.test(l)).map((l) => l.split(":")[0])).toEqual(
      expect.arrayContaining([
        "[control-plane build] etcd",
        "[control-plane build] kube-apiserver",
      ]),
    );
    expect(said.at(-1)).toMatch(/^\[control-plane build\] done in /);
  }, 60_000);

  it("says it is still waiting while another build holds the lock", async () => {
    const env = coldEnvironment(executable(path.join(dir, "go"), "exit 1\n"));
    const out = cacheDir(env);
    mkdirSync(out, { recursive: true });
    holder = spawn("flock", [path.join(out, ".build.lock"), "-c", "echo held; cat"], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    await once(holder.stdout ?? holder, "data");
    const said: string[] = [];
    const say = (line: string) => {
      said.push(line);
      if (!line.includes("still waiting for the other build")) return;
      // The other build finishes: its binaries appear, the lock is released.
      for (const name of ["kube-apiserver", "etcd"]) executable(path.join(out, name), "");
      holder?.stdin?.end();
    };

    await expect(buildControlPlane({ say, env })).resolves.toBe(out);
    expect(said).toEqual(
      expect.arrayContaining([
        `[control-plane build] another build holds ${out}/.build.lock; waiting for it`,
        expect.stringMatching(
          /^\[control-plane build\] still waiting for the other build \(0m0\ds\)$/,
        ),
        `[control-plane build] cached (built by another process): ${out}`,
      ]),
    );
  }, 60_000);
});
