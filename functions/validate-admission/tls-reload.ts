/**
 * Keeps an HTTPS server's certificate current: when the cert or key file changes (cert-manager
 * renewal, a Secret update), the new pair is loaded for new connections without a restart.
 * Files are polled by stat, which follows the symlinks Kubernetes swaps in a Secret mount.
 */
import { unwatchFile, watchFile } from "node:fs";
import { readFile } from "node:fs/promises";
import { Server as TlsServer, createSecureContext } from "node:tls";
import type { Log } from "../../shared/runtime/function.js";

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

export interface TlsReloader {
  /** Reads both files and swaps them in when they changed and form a valid pair. */
  reload(): Promise<"reloaded" | "unchanged" | "invalid">;
  stop(): void;
}

export function reloadTlsOnChange(
  server: unknown,
  files: TlsFiles,
  log: Log,
  intervalMs = 2_000,
): TlsReloader {
  if (!(server instanceof TlsServer))
    throw new TypeError("reloadTlsOnChange needs an HTTPS server");
  let loaded = "";
  let primed = false;
  let queue: Promise<unknown> = Promise.resolve();

  const reloadOnce = async (): Promise<"reloaded" | "unchanged" | "invalid"> => {
    const [cert, key] = await Promise.all([readFile(files.certFile), readFile(files.keyFile)]);
    const fingerprint = `${cert.toString("base64")}|${key.length}`;
    if (fingerprint === loaded) return "unchanged";
    try {
      // Validates the pair first: a cert written before its key must not break the listener.
      createSecureContext({ cert, key });
    } catch (error) {
      log.warn(
        { certFile: files.certFile, err: error },
        "TLS files changed but do not form a valid pair yet; keeping the current certificate",
      );
      return "invalid";
    }
    server.setSecureContext({ cert, key });
    loaded = fingerprint;
    if (primed) log.info({ certFile: files.certFile }, "reloaded the TLS certificate");
    primed = true;
    return "reloaded";
  };

  // Serialised, so two quick changes never race each other.
  const reload = (): Promise<"reloaded" | "unchanged" | "invalid"> => {
    const next = queue.then(reloadOnce, reloadOnce);
    queue = next.catch(() => undefined);
    return next;
  };
  const onChange = (): void => {
    reload().catch((error: unknown) => {
      log.warn(
        { certFile: files.certFile, err: error },
        "could not read the TLS files; keeping the current certificate",
      );
    });
  };
  const options = { interval: intervalMs, persistent: false };
  watchFile(files.certFile, options, onChange);
  watchFile(files.keyFile, options, onChange);
  // Remember what the server started with, so later polls compare against it.
  onChange();
  return {
    reload,
    stop: () => {
      unwatchFile(files.certFile, onChange);
      unwatchFile(files.keyFile, onChange);
    },
  };
}
