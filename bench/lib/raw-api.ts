/**
 * Bulk setup requests (thousands of Pods and their status) over kept-alive TLS connections with
 * the admin token. Only for building a world fast, and for what a client such as kubectl sends
 * that the functions never do (a dry run and its warnings): what the functions do is measured
 * through their own client (shared/kube).
 */
import https from "node:https";

export interface RawReply {
  readonly status: number;
  readonly body: string;
  /** The texts of the reply's Warning headers, in order (admission warnings among them). */
  readonly warnings: readonly string[];
}

/** `299 - "text"` -> text (RFC 7234 warn-text, as the API server quotes it). */
function warningTexts(raw: readonly string[]): string[] {
  const texts: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() !== "warning") continue;
    const match = /^\d{3} \S+ "((?:[^"\\]|\\.)*)"/.exec(raw[i + 1] ?? "");
    if (match?.[1] !== undefined) texts.push(match[1].replace(/\\(.)/g, "$1"));
  }
  return texts;
}

export class RawApi {
  private readonly agent: https.Agent;

  constructor(
    private readonly server: string,
    caPem: string,
    private readonly token: string,
    /** Requests in flight at once; more wait for a socket. */
    maxSockets = 32,
  ) {
    this.agent = new https.Agent({ keepAlive: true, maxSockets, ca: caPem });
  }

  request(
    method: string,
    path: string,
    body?: unknown,
    contentType = "application/json",
  ): Promise<RawReply> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.token}`,
      accept: "application/json",
    };
    if (payload !== undefined) {
      headers["content-type"] = contentType;
      // Node frames a DELETE body only with a length (no chunked encoding for DELETE by default).
      headers["content-length"] = String(Buffer.byteLength(payload));
    }
    return new Promise((resolve, reject) => {
      const req = https.request(
        new URL(path, this.server),
        { method, agent: this.agent, headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", reject);
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString("utf8"),
              warnings: warningTexts(res.rawHeaders),
            }),
          );
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  }

  /** The request, failing unless the answer is 2xx. */
  async must(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<RawReply> {
    const reply = await this.request(method, path, body, contentType);
    if (reply.status < 200 || reply.status >= 300) {
      throw new Error(`${method} ${path}: HTTP ${reply.status} ${reply.body.slice(0, 300)}`);
    }
    return reply;
  }

  mergePatch(path: string, body: unknown): Promise<RawReply> {
    return this.must("PATCH", path, body, "application/merge-patch+json");
  }

  close(): void {
    this.agent.destroy();
  }
}
