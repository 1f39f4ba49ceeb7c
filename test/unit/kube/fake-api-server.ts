// A plain-HTTP stand-in for the API server on loopback, for the unit tests of shared/kube's
// transport and of the connector's reads through it: it records each request and answers as the
// test says, and hands out a kubeconfig source (a bearer token) that points at it.
import { once } from "node:events";
import http from "node:http";
import type https from "node:https";
import type { AddressInfo } from "node:net";
import type { KubeConfigSource } from "../../../shared/kube/transport.js";

export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly contentType: string | undefined;
  readonly authorization: string | undefined;
  readonly body: string;
}

/** A loopback HTTP server that records requests and answers with `answer`. */
export async function fakeApiServer(answer: (seen: Seen, res: http.ServerResponse) => void) {
  const seen: Seen[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request = {
        method: req.method ?? "",
        url: req.url ?? "",
        contentType: req.headers["content-type"],
        authorization: req.headers.authorization,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      seen.push(request);
      answer(request, res);
    });
  });
  server.on("connection", () => (connections += 1));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    seen,
    connections: () => connections,
    kubeConfig: kubeConfigFor(`http://127.0.0.1:${port}`),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

export function kubeConfigFor(server: string): KubeConfigSource {
  return {
    getCurrentCluster: () => ({ name: "fake", server, skipTLSVerify: true }),
    applyToHTTPSOptions: (options: https.RequestOptions) => {
      options.headers = { Authorization: "Bearer token-1" };
      return Promise.resolve();
    },
  };
}

export const json = (res: http.ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
};

/** A metav1.Status, as the API server answers a failed request. */
export const statusBody = (code: number, reason: string, message: string) => ({
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  code,
  reason,
  message,
});
