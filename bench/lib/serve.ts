/**
 * The functions served in the bench's own process, as `npm start` serves them (the combined app
 * at POST /<name>), logging at info level to a file as a deployment would log to stdout.
 */
import { pino } from "pino";
import type { SdewanFunction } from "../../shared/runtime/function.js";
import {
  Runtime,
  createCombinedApp,
  createLogger,
  startServer,
} from "../../shared/runtime/index.js";

export interface InProcessServer {
  /** Base URL; each function is at `${url}/<name>`. */
  readonly url: string;
  close(): Promise<void>;
}

export async function serveInProcess(
  functions: readonly SdewanFunction[],
  logFile: string,
): Promise<InProcessServer> {
  const destination = pino.destination({ dest: logFile, sync: false });
  const runtime = new Runtime({ logger: createLogger({ level: "info", destination }) });
  const running = await startServer(createCombinedApp(functions, runtime), runtime, {
    port: 0,
    host: "127.0.0.1",
    shutdownTimeoutMs: 2_000,
  });
  return {
    url: running.url,
    close: async () => {
      await running.close();
      destination.flushSync();
    },
  };
}
