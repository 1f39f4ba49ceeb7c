/**
 * One heartbeat of a Peer (reference B.5): `GET https://<host>:<port>/healthz` on every gateway
 * at once over mutual TLS (server name = the Peer's name), the first success wins. A success
 * carries the remote peer's labels in the `ClusterLinkPeerLabels` header (base64 JSON). Every
 * failure (refused, timed out, a certificate the other side rejects) is a failed heartbeat, never
 * a thrown error, whose message says what happened (describeProbeFailure); key material never
 * appears in a message.
 */
import { readFile } from "node:fs/promises";
import { request } from "node:https";
import path from "node:path";
import { createSecureContext } from "node:tls";
import * as z from "zod";
import type { Heartbeat } from "./plan-peer-health.js";

export interface PeerTls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

export interface Gateway {
  readonly host: string;
  readonly port: number;
}

const LABELS_HEADER = "clusterlinkpeerlabels";
const labelsSchema = z.record(z.string(), z.string());

function labelsOf(header: string | string[] | undefined): Record<string, string> {
  if (typeof header !== "string" || header === "") return {};
  try {
    const parsed = labelsSchema.safeParse(JSON.parse(Buffer.from(header, "base64").toString()));
    return parsed.success ? parsed.data : {};
  } catch {
    return {};
  }
}

/** TLS alerts a gateway sends when it refuses the client certificate it was shown. */
const REFUSED_CERTIFICATE_ALERT =
  /^ERR_SSL_(?:SSLV3|TLSV1|TLSV13)_ALERT_(?:BAD_CERTIFICATE|UNKNOWN_CA|CERTIFICATE_UNKNOWN|CERTIFICATE_REQUIRED|UNSUPPORTED_CERTIFICATE|CERTIFICATE_EXPIRED|CERTIFICATE_REVOKED|ACCESS_DENIED)$/;

const IDENTITY_REFUSED = "it does not accept our identity (signed by another CA?)";

/**
 * What a probe's failure says to an operator. A gateway that refuses our client certificate
 * either answers with a TLS alert, or (TLS 1.3: it checks the certificate after the handshake
 * completed on our side) just closes the connection, which Node reports as "socket hang up":
 * both are named for what they are. Anything else keeps Node's message (e.g. a Peer name that
 * is not in the gateway's certificate: "Host: <peer>. is not in the cert's altnames").
 */
export function describeProbeFailure(
  error: Error & { readonly code?: string },
  handshakeDone: boolean,
): string {
  if (error.code !== undefined && REFUSED_CERTIFICATE_ALERT.test(error.code)) {
    return `the gateway refused our client certificate (${error.message.trim()}): ${IDENTITY_REFUSED}`;
  }
  if (handshakeDone && (error.code === "ECONNRESET" || error.message === "socket hang up")) {
    return `the gateway closed the TLS connection after our client certificate, without answering: ${IDENTITY_REFUSED}`;
  }
  return error.message;
}

/**
 * One deadline for the whole exchange (connect, handshake, answer). The request's own `timeout`
 * is a socket idle timeout, which a TLS socket starts again once the TCP connect completes: a
 * gateway that accepts and never answers cost twice the timeout that way.
 */
function probe(
  gateway: Gateway,
  peer: string,
  tls: PeerTls,
  timeoutMs: number,
): Promise<Heartbeat> {
  return new Promise((resolve) => {
    const where = `${gateway.host}:${gateway.port}`;
    let req: ReturnType<typeof request>;
    try {
      req = request(
        {
          host: gateway.host,
          port: gateway.port,
          path: "/healthz",
          method: "GET",
          servername: peer,
          ca: tls.ca,
          cert: tls.cert,
          key: tls.key,
          agent: false,
        },
        (res) => {
          clearTimeout(deadline);
          res.resume();
          if (res.statusCode === 200)
            resolve({ ok: true, labels: labelsOf(res.headers[LABELS_HEADER]) });
          else resolve({ ok: false, error: `${where}: HTTP ${res.statusCode ?? "?"}` });
        },
      );
    } catch (error) {
      // TLS refuses its options synchronously (readPeerTls checks them first): a failure too.
      resolve({ ok: false, error: `${where}: ${(error as Error).message}` });
      return;
    }
    const deadline = setTimeout(
      () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    let handshakeDone = false;
    req.on("socket", (socket) => {
      socket.once("secureConnect", () => {
        handshakeDone = true;
      });
    });
    req.on("error", (error) => {
      clearTimeout(deadline);
      resolve({ ok: false, error: `${where}: ${describeProbeFailure(error, handshakeDone)}` });
    });
    req.end();
  });
}

/** Resolves with the first success, or with every failure once all gateways failed. */
export function heartbeat(
  peer: string,
  gateways: readonly Gateway[],
  tls: PeerTls,
  timeoutMs: number,
): Promise<Heartbeat> {
  if (gateways.length === 0) {
    return Promise.resolve({ ok: false, error: "the Peer lists no gateways" });
  }
  return new Promise((resolve) => {
    const failures: string[] = [];
    for (const gateway of gateways) {
      void probe(gateway, peer, tls, timeoutMs).then((beat) => {
        if (beat.ok) resolve(beat);
        else if (failures.push(beat.error) === gateways.length) {
          resolve({ ok: false, error: failures.join("; ") });
        }
      });
    }
  });
}

/** Where the mounted Secret puts the client identity: ca.crt, tls.crt and tls.key. */
export const DEFAULT_PEER_TLS_DIR = "/var/run/secrets/clusterlink-peer";

/** The files were read, but TLS cannot use them (a key not the certificate's, a bad PEM). */
export class InvalidPeerTlsError extends Error {
  override readonly name = "InvalidPeerTlsError";
}

/**
 * Read on every event, so a rotated Secret is used at once; checked here, once, because TLS
 * would otherwise throw the same complaint out of every probe. OpenSSL's message names what is
 * wrong, never the bytes.
 */
export async function readPeerTls(dir: string): Promise<PeerTls> {
  const [ca, cert, key] = await Promise.all(
    ["ca.crt", "tls.crt", "tls.key"].map((file) => readFile(path.join(dir, file), "utf8")),
  );
  const tls = { ca: ca ?? "", cert: cert ?? "", key: key ?? "" };
  try {
    createSecureContext(tls);
  } catch (error) {
    throw new InvalidPeerTlsError(
      `ca.crt, tls.crt and tls.key in ${dir} are no TLS identity: ${(error as Error).message}`,
    );
  }
  return tls;
}
