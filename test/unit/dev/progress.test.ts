// The demo's in-process waits (the control plane starting, the servers getting ready, ClusterLink
// converging, the at-rest measurement) say every 30 s that they still run, and stop when done.
import { jest } from "@jest/globals";
import { elapsed, HEARTBEAT_MS, withHeartbeat } from "../../../dev/lib/progress.js";

afterEach(() => jest.useRealTimers());

it("formats the time elapsed as go-tool.sh does", () => {
  expect([elapsed(0), elapsed(65_400), elapsed(30 * 60_000)]).toEqual(["0m00s", "1m05s", "30m00s"]);
});

it("says a step still runs every 30 s until it settles, then nothing more", async () => {
  jest.useFakeTimers({ now: 0 });
  const said: string[] = [];
  let finish: (value: string) => void = () => {};
  const step = withHeartbeat(
    "control plane start (etcd, kube-apiserver, CRDs)",
    new Promise<string>((resolve) => (finish = resolve)),
    { say: (line) => said.push(line) },
  );

  jest.advanceTimersByTime(HEARTBEAT_MS * 2);
  finish("up");
  await expect(step).resolves.toBe("up");
  jest.advanceTimersByTime(HEARTBEAT_MS * 3);

  expect(said).toEqual([
    "control plane start (etcd, kube-apiserver, CRDs): still running, 0m30s elapsed",
    "control plane start (etcd, kube-apiserver, CRDs): still running, 1m00s elapsed",
  ]);
});

it("stops saying when the step fails, and passes the failure on", async () => {
  jest.useFakeTimers({ now: 0 });
  const said: string[] = [];
  let fail: (error: Error) => void = () => {};
  const step = withHeartbeat(
    "functions start",
    new Promise<never>((_, reject) => (fail = reject)),
    {
      say: (line) => said.push(line),
    },
  );

  jest.advanceTimersByTime(HEARTBEAT_MS);
  fail(new Error("functions ended (exit 1) before http://127.0.0.1:1/_/ready answered"));
  await expect(step).rejects.toThrow("functions ended");
  jest.advanceTimersByTime(HEARTBEAT_MS * 3);

  expect(said).toEqual(["functions start: still running, 0m30s elapsed"]);
});
