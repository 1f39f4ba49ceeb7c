/** The runtime's JSON logger (pino): one line per event, level as a word, ISO time. */
import { pino, type DestinationStream, type Logger } from "pino";

export type { Logger } from "pino";

export interface LoggerOptions {
  /** Default: LOG_LEVEL or "info". */
  readonly level?: string;
  /** Default: stdout. Tests pass a stream to read the lines back. */
  readonly destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const config = {
    level: options.level ?? process.env["LOG_LEVEL"] ?? "info",
    base: { service: "sdewan-functions" },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return options.destination === undefined ? pino(config) : pino(config, options.destination);
}
