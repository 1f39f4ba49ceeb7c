/**
 * Raw HTTP helpers for talking to the CNF simulator the way the upstream e2e script does
 * (form login, then `Cookie: sysauth=<token>`), independent of shared/cnf so the simulator's
 * tests do not depend on the client they are meant to check.
 */
import { request } from "node:http";
import type { CnfSim } from "../../../dev/cnf-sim/index.js";

export interface RawReply {
  readonly status: number;
  readonly reason: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

export interface RawOptions {
  readonly body?: unknown;
  readonly cookie?: string;
  readonly contentType?: string;
  readonly signal?: AbortSignal;
}

/** One request with a fresh connection; `path` is relative to the origin. */
export function raw(
  sim: { origin: string },
  method: string,
  path: string,
  options: RawOptions = {},
): Promise<RawReply> {
  const body =
    options.body === undefined
      ? undefined
      : typeof options.body === "string"
        ? options.body
        : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      `${sim.origin}${path}`,
      {
        method,
        agent: false,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        headers: {
          ...(options.cookie === undefined ? {} : { cookie: `sysauth=${options.cookie}` }),
          ...(body === undefined
            ? {}
            : {
                "content-type": options.contentType ?? "application/json",
                "content-length": String(Buffer.byteLength(body)),
              }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            reason: res.statusMessage ?? "",
            headers: res.headers,
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

export const LUCI = "/cgi-bin/luci";

/** Logs in with the form the upstream client posts; returns the sysauth token. */
export async function login(sim: CnfSim, password = ""): Promise<string> {
  const reply = await raw(sim, "POST", `${LUCI}/`, {
    body: `luci_username=root&luci_password=${encodeURIComponent(password)}`,
    contentType: "application/x-www-form-urlencoded",
  });
  if (reply.status !== 302) throw new Error(`login failed: ${reply.status}`);
  const cookie = [reply.headers["set-cookie"] ?? []].flat()[0] ?? "";
  const token = /sysauth=([^;]+)/.exec(cookie)?.[1];
  if (token === undefined) throw new Error("login: no sysauth cookie");
  return token;
}

/** A logged-in caller of one simulator's REST API: `api.post("mwan3/policies", body)`. */
export async function restApi(sim: CnfSim) {
  const cookie = await login(sim);
  const path = (collectionPath: string): string => {
    const [module, ...rest] = collectionPath.split("/");
    return `${LUCI}/sdewan/${module ?? ""}/v1/${rest.join("/")}`;
  };
  const json = async (reply: Promise<RawReply>) => {
    const r = await reply;
    return { ...r, json: tryJson(r.text) };
  };
  return {
    cookie,
    get: (p: string) => json(raw(sim, "GET", path(p), { cookie })),
    post: (p: string, body: unknown) => json(raw(sim, "POST", path(p), { cookie, body })),
    put: (p: string, body: unknown) => json(raw(sim, "PUT", path(p), { cookie, body })),
    delete: (p: string) => json(raw(sim, "DELETE", path(p), { cookie })),
    call: (method: string, fullPath: string, body?: unknown) =>
      json(raw(sim, method, fullPath, { cookie, ...(body === undefined ? {} : { body }) })),
  };
}

export function tryJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Polls `condition` until it holds or the deadline passes; for effects that happen on a timer. */
export async function waitFor(
  condition: () => Promise<boolean> | boolean,
  timeoutMs = 5000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Sample bodies the upstream samples use, valid on a simulator with interfaces net0..net5. */
export const samples = {
  policy: { name: "balance1", members: [{ interface: "net0", metric: "2", weight: "2" }, { interface: "net1", metric: "3", weight: "3" }] },
  rule: { name: "sample", policy: "balance1", src_ip: "10.0.0.0/24", dest_port: "80", proto: "tcp", family: "ipv4", sticky: "0", timeout: "600" },
  zone: { name: "lan0", network: ["net0"], input: "ACCEPT", output: "ACCEPT", forward: "ACCEPT", masq: "0", mtu_fix: "1" },
  zone2: { name: "wan0", network: ["net1"], input: "REJECT", output: "ACCEPT", forward: "REJECT", masq: "1" },
  snat: { name: "snat1", src_ip: "10.1.0.0/16", src_dip: "192.168.1.2", dest: "wan0", dest_ip: "192.168.1.0/24", proto: "tcp", target: "SNAT" },
  dnat: { name: "dnat1", src: "wan0", src_dport: "8080", dest_ip: "10.1.0.5", dest_port: "80", proto: "tcp", target: "DNAT" },
  forwarding: { name: "fwd1", src: "lan0", dest: "wan0" },
  fwRule: { name: "reject80", src: "wan0", proto: "tcp", dest_port: "80", target: "REJECT" },
  proposal: { name: "prop1", encryption_algorithm: "aes128", hash_algorithm: "sha256", dh_group: "modp3072" },
  remote: {
    name: "site1",
    type: "VTI-based",
    gateway: "10.10.10.1",
    authentication_method: "psk",
    pre_shared_key: "not-a-secret-test-psk",
    crypto_proposal: ["prop1"],
    connections: [{ name: "conn1", conn_type: "tunnel", mode: "start", local_subnet: "192.168.1.0/24", crypto_proposal: ["prop1"] }],
  },
  service: { name: "svc1", fullname: "foo.default.svc.cluster.local", port: "8866", dport: "8080" },
} as const; // prettier-ignore
