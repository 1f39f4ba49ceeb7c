import { inspect } from "node:util";
import { startCnfSim, type CnfSim } from "../../../dev/cnf-sim/index.js";
import {
  CnfClient,
  CnfCredentials,
  CnfSessionCache,
  cnfCredentialsFromEnv,
  type CnfLog,
} from "../../../shared/cnf/index.js";

const PASSWORD = "pw-7f3a9c-never-log-me";
const zones = { module: "firewall", collection: "zones" } as const;

/** Every way a value is commonly turned into text on its way to a log line. */
function renderings(value: unknown): string[] {
  const texts = [
    String(value),
    inspect(value, { depth: 10, showHidden: true }),
    JSON.stringify(value) ?? "",
  ];
  if (value instanceof Error)
    texts.push(value.message, value.stack ?? "", inspect(value.cause, { depth: 10 }));
  return texts;
}

describe("the CNF password never appears in logs, errors or serialised objects", () => {
  let sim: CnfSim;
  const lines: string[] = [];
  const log: CnfLog = {
    debug: (fields, message) => lines.push(JSON.stringify({ ...fields, message })),
    warn: (fields, message) => lines.push(JSON.stringify({ ...fields, message })),
  };
  const client = (password: string, timeoutMs = 1500) =>
    new CnfClient({
      baseUrl: sim.url,
      credentials: new CnfCredentials("root", password),
      sessions: new CnfSessionCache(),
      retry: { minDelayMs: 1, maxDelayMs: 2 },
      timeoutMs,
      log,
    });

  beforeAll(async () => {
    sim = await startCnfSim({ host: "127.0.0.44", password: PASSWORD });
  });
  afterAll(() => sim.close());

  it("redacts credentials and clients in String, JSON and inspect", () => {
    const credentials = new CnfCredentials("root", PASSWORD);
    const c = client(PASSWORD);
    for (const text of [
      ...renderings(credentials),
      ...renderings(c),
      ...renderings({ nested: { c, credentials } }),
    ]) {
      expect(text).not.toContain(PASSWORD);
    }
    expect(JSON.stringify(credentials)).toBe('{"username":"root","password":"[redacted]"}');
  });

  it("keeps it out of every error and every log line, on success and on each failure kind", async () => {
    const errors: unknown[] = [];
    const collect = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: unknown) => errors.push(e),
      );
    await client(PASSWORD).update(zones, { name: "lan0", network: ["net0"] });
    await collect(client(`${PASSWORD}-wrong`).list(zones)); // login refused
    sim.failNext({ kind: "status", status: 500, collection: "zones", count: 3 });
    await collect(client(PASSWORD).list(zones)); // retried, then given up
    sim.failNext({ kind: "garbage", collection: "zones", count: 3 });
    await collect(client(PASSWORD).list(zones));
    sim.failNext({ kind: "hang", collection: "login", count: 3 });
    await collect(client(PASSWORD, 50).list(zones));
    sim.expireSessions();
    sim.failNext({ kind: "status", status: 403, collection: "zones", count: 2 });
    await collect(client(PASSWORD).list(zones));
    await collect(client(PASSWORD).update(zones, { name: "x".repeat(12) }));
    await sim.refuseConnections();
    await collect(client(PASSWORD).list(zones));
    await sim.acceptConnections();

    expect(errors.map((e) => (e as { code: string }).code)).toEqual([
      "login-failed",
      "cnf-http",
      "bad-reply",
      "timeout",
      "cnf-http",
      "cnf-http",
      "unreachable",
    ]);
    expect(lines.length).toBeGreaterThan(0);
    for (const text of [...errors.flatMap(renderings), ...lines])
      expect(text).not.toContain(PASSWORD);
  });

  it("does not show a Secret file's content when the file is unreadable or read", () => {
    const credentials = cnfCredentialsFromEnv(
      { CNF_PASSWORD_FILE: "/run/secret" },
      () => `${PASSWORD}\n`,
    );
    for (const text of renderings(credentials)) expect(text).not.toContain(PASSWORD);
  });
});
