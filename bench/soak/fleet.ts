/**
 * The soak's processes: two instances of the function server (every event function) and the
 * connector, each a child process with its own log file per incarnation. An instance can be
 * killed (SIGKILL, as a crash or an OOM kill) and started again on the same port.
 */
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { freePort, spawnFunctionServer, type FunctionProcess } from "../lib/child.js";

export const SOAK_FUNCTIONS = "reconcile-rule,on-deployment-ready,egress-group-sync";

export interface Instance {
  readonly name: string;
  readonly port: number;
  proc: FunctionProcess;
  up: boolean;
  incarnation: number;
  /** Exits we did not cause. */
  unexpectedExits: string[];
  killed: number;
}

async function waitUntil(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(100);
  }
}

const ok = async (url: string): Promise<boolean> => (await fetch(url)).status === 200;

export class FunctionInstances {
  readonly instances: Instance[] = [];
  logFiles: string[] = [];

  constructor(
    private readonly workDir: string,
    private readonly env: Record<string, string>,
  ) {}

  async start(count: number): Promise<void> {
    const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
    await Promise.all(
      ports.map(async (port, i) => {
        const instance: Instance = {
          name: `functions-${i}`,
          port,
          proc: await this.spawn(`functions-${i}`, port, 0),
          up: false,
          incarnation: 0,
          unexpectedExits: [],
          killed: 0,
        };
        this.watch(instance);
        this.instances.push(instance);
        await this.waitReady(instance);
      }),
    );
  }

  private spawn(name: string, port: number, incarnation: number): Promise<FunctionProcess> {
    const logFile = path.join(this.workDir, `${name}.${incarnation}.log`);
    this.logFiles.push(logFile);
    return spawnFunctionServer({ logFile, port, env: { ...this.env, FUNCTIONS: SOAK_FUNCTIONS } });
  }

  private watch(instance: Instance): void {
    const { proc, incarnation } = instance;
    void proc.exited.then((how) => {
      if (instance.incarnation === incarnation && !proc.child.killed) {
        instance.unexpectedExits.push(`${instance.name}#${incarnation} ${how}`);
      }
      if (instance.incarnation === incarnation) instance.up = false;
    });
  }

  private async waitReady(instance: Instance): Promise<void> {
    await waitUntil(
      () => ok(`http://127.0.0.1:${instance.port}/_/ready`),
      `${instance.name} ready`,
      180_000,
    );
    instance.up = true;
  }

  /** URLs of the instances believed up (the proxy falls back to the others on a refused connection). */
  urls(): string[] {
    const up = this.instances.filter((i) => i.up);
    return (up.length > 0 ? up : this.instances).map((i) => `http://127.0.0.1:${i.port}`);
  }

  /** SIGKILL an instance, start it again after `downMs`, resolve when it is ready. */
  async killAndRestart(instance: Instance, downMs: number): Promise<void> {
    instance.up = false;
    instance.killed += 1;
    instance.proc.child.kill("SIGKILL");
    await instance.proc.exited;
    await delay(downMs);
    instance.incarnation += 1;
    instance.proc = await this.spawn(instance.name, instance.port, instance.incarnation);
    this.watch(instance);
    await this.waitReady(instance);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.instances.map(async (i) => {
        i.incarnation += 1; // an exit from here on is ours
        await i.proc.stop();
      }),
    );
  }
}

export interface ConnectorProcess {
  readonly proc: FunctionProcess;
  readonly metricsUrl: string;
  readonly logFile: string;
  unexpectedExit: string | undefined;
}

export async function startConnector(
  workDir: string,
  configFile: string,
  port: number,
  env: Record<string, string>,
): Promise<ConnectorProcess> {
  const logFile = path.join(workDir, "connector.log");
  const proc = await spawnFunctionServer({
    logFile,
    env,
    script: "connector/main.ts",
    args: ["--config", configFile],
  });
  const connector: ConnectorProcess = {
    proc,
    metricsUrl: `http://127.0.0.1:${port}/metrics`,
    logFile,
    unexpectedExit: undefined,
  };
  // killed: a signal we sent; any other exit is a crash.
  void proc.exited.then((how) => {
    if (!proc.child.killed) connector.unexpectedExit = how;
  });
  await waitUntil(() => ok(`http://127.0.0.1:${port}/readyz`), "the connector ready", 180_000);
  return connector;
}

/** Sum of a Prometheus counter or gauge over its label sets, optionally filtered by a label text. */
export function metricSum(text: string, name: string, labelFilter?: string): number {
  return text
    .split("\n")
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => labelFilter === undefined || line.includes(labelFilter))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
}

/** "reason=503: 12, reason=network: 3" for one counter, by the value of `label`. */
export function metricBy(text: string, name: string, label: string): Record<string, number> {
  const result: Record<string, number> = {};
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const value = new RegExp(`${label}="([^"]*)"`).exec(line)?.[1] ?? "";
    result[value] = (result[value] ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return result;
}
