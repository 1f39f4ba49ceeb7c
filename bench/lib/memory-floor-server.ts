/**
 * The memory floor of a function process (issue 28 item 5): a Node process that serves HTTP and
 * holds one TLS connection to the API server, and nothing else. Each POST reads the request body,
 * makes one GET over a kept-alive TLS connection and answers the JSON it read: what every
 * function does before any work of its own. The function-memory row bundles it (only Node's own
 * modules) and runs it with the image's flags beside the functions.
 *
 * FLOOR_API_SERVER, FLOOR_API_TOKEN, FLOOR_API_CA_FILE: where and as whom; PORT, HOST: where it
 * listens. It logs {"msg":"listening"} as the function server does.
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";

const env = process.env;
const server = env["FLOOR_API_SERVER"] ?? "";
const agent = new https.Agent({
  keepAlive: true,
  maxSockets: 1,
  ca: readFileSync(env["FLOOR_API_CA_FILE"] ?? ""),
});

function apiGet(path: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      new URL(path, server),
      { agent, headers: { authorization: `Bearer ${env["FLOOR_API_TOKEN"] ?? ""}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
      },
    );
    req.on("error", reject);
  });
}

const listener = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    apiGet("/api/v1/namespaces/default").then(
      (body) => {
        res.writeHead(202, { "content-type": "application/json" });
        res.end(JSON.stringify({ read: body }));
      },
      (error: unknown) => {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(String(error));
      },
    );
  });
});
listener.listen(Number(env["PORT"] ?? 8080), env["HOST"] ?? "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ msg: "listening" })}\n`);
});
process.once("SIGTERM", () => {
  agent.destroy();
  listener.close(() => process.exit(0));
});
