import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadEventFixture } from "../../fixtures/events/index.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const TSX = join(ROOT, "node_modules/tsx/dist/cli.mjs");

/** Resolves with the first log line that satisfies `match`, or rejects at the deadline. */
function waitForLine(
  child: ChildProcessWithoutNullStreams,
  match: (line: Record<string, unknown>) => boolean,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let buffered = "";
    const timer = setTimeout(
      () => reject(new Error(`no matching log line in ${timeoutMs} ms:\n${buffered}`)),
      timeoutMs,
    );
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      for (const text of buffered.split("\n")) {
        if (!text.startsWith("{")) continue;
        const line = JSON.parse(text) as Record<string, unknown>;
        if (match(line)) {
          clearTimeout(timer);
          resolve(line);
          return;
        }
      }
    });
  });
}

describe("npm start (functions/server.ts) as a process", () => {
  it("serves the selected functions, health and metrics, and exits 0 on SIGTERM", async () => {
    // Its own temp dir: server.ts keeps Node's compile cache there (no NODE_COMPILE_CACHE set).
    const temp = mkdtempSync(join(tmpdir(), "server-process-"));
    const { NODE_COMPILE_CACHE: _unset, ...env } = process.env;
    // process.execPath is the Node that runs jest: the pinned Node 24 under npm scripts.
    const child = spawn(process.execPath, [TSX, "functions/server.ts"], {
      cwd: ROOT,
      env: { ...env, TMPDIR: temp, PORT: "0", HOST: "127.0.0.1", FUNCTIONS: "reconcile-rule" },
    });
    try {
      const listening = await waitForLine(child, (line) => line["msg"] === "listening", 20_000);
      expect(listening["functions"]).toEqual(["reconcile-rule"]);
      const url = String(listening["url"]);

      expect((await fetch(`${url}/_/health`)).status).toBe(200);
      expect((await fetch(`${url}/_/ready`)).status).toBe(200);
      // Malformed on purpose: refused by intake, so the route is proven without running a handler.
      const { headers } = loadEventFixture("binary-ref-update");
      const served = await fetch(`${url}/reconcile-rule`, { method: "POST", headers, body: "{" });
      expect(served.status).toBe(400);
      expect(served.headers.get("x-sdewan-code")).toBe("bad-json");
      const filtered = await fetch(`${url}/egress-group-sync`, {
        method: "POST",
        headers,
        body: "{",
      });
      expect(filtered.status).toBe(404);
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).toContain(
        'sdewan_intake_errors_total{function="reconcile-rule",code="bad-json"} 1',
      );
      expect(metrics).toContain("process_cpu_seconds_total");

      // Generous: on a loaded 2-core machine the drain and the compile-cache flush took > 10 s.
      const stopped = waitForLine(child, (line) => line["msg"] === "stopped", 30_000);
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await stopped;
      expect(await exited).toEqual([0, null]);
      const cached = readdirSync(join(temp, "node-compile-cache"), { recursive: true });
      expect(cached.length).toBeGreaterThan(1);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      rmSync(temp, { recursive: true, force: true });
    }
  }, 80_000);
});
