// Issue 25 §1 as a property: whatever a CNF answers (an error status with an upstream message, a
// body that is not JSON, JSON of the wrong shape, a 2xx with garbage), to any kind of call, with
// any of the CNF's keys planted anywhere in it, no 8 consecutive characters of any key reach a
// channel: the client's error, its log lines (every level), the rule status and outcome the
// planner makes of the failure, and the Event it records.
import fc from "fast-check";
import { startCnfSim, type CnfSim, type SimFaultInput } from "../../../dev/cnf-sim/index.js";
import { KeyMaterial } from "../../../shared/core/redact.js";
import { CnfClient, CnfCredentials, CnfSessionCache } from "../../../shared/cnf/index.js";
import { planRuleEvent } from "../../../shared/sync/plan-events.js";
import { planRuleDecision } from "../../../shared/sync/plan-status.js";
import { samples } from "../cnf/support.js";

const zones = { module: "firewall", collection: "zones" } as const;
const WINDOW = 8;

/** Keys from an alphabet the surrounding text never uses, so any shared window is a leak. */
const keyChars = fc.constantFrom(...'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789+/=_!"\\\n'.split(""));
const key = fc
  .integer({ min: WINDOW, max: 200 })
  .chain((n) => fc.string({ unit: keyChars, minLength: n, maxLength: n }));
const fillerChars = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz .,:;{}[]()".split(""));
/** Any length up to 400, evenly: a key must land across the 80- and 300-character cuts. */
const filler = fc
  .integer({ min: 0, max: 400 })
  .chain((n) => fc.string({ unit: fillerChars, minLength: n, maxLength: n }));

/** Where the planted key goes: inside a text, alone, or in a JSON value. */
const reply = fc.record({
  before: filler,
  after: filler,
  form: fc.constantFrom("message", "garbage", "json-name", "json-field"),
  status: fc.constantFrom(200, 201, 400, 403, 404, 409, 500, 503),
});

const call = fc.constantFrom("list", "get", "update", "create", "delete", "restart");

type Reply = { before: string; after: string; form: string; status: number };

function faultOf(planted: string, r: Reply): SimFaultInput {
  const text = `${r.before}${planted}${r.after}`;
  switch (r.form) {
    case "message":
      return { kind: "status", status: r.status < 400 ? 400 : r.status, message: text, count: 5 };
    case "json-name":
      return { kind: "garbage", status: r.status, body: JSON.stringify({ name: text }), count: 5 };
    case "json-field":
      return {
        kind: "garbage",
        status: r.status,
        body: JSON.stringify({ zones: [{ name: 7, note: text }], message: text }),
        count: 5,
      };
    default:
      return { kind: "garbage", status: r.status, body: text, count: 5 };
  }
}

/** Every window of WINDOW characters of a key, raw and as JSON escapes it. */
function windows(secret: string): string[] {
  const out = new Set<string>();
  for (const form of [secret, JSON.stringify(secret).slice(1, -1)]) {
    for (let i = 0; i + WINDOW <= form.length; i += 1) out.add(form.slice(i, i + WINDOW));
  }
  return [...out];
}

describe("no key of a CNF reaches any channel, whatever the CNF echoes", () => {
  let sim: CnfSim;
  beforeAll(async () => {
    sim = await startCnfSim({ host: "127.0.0.44" });
  });
  afterAll(() => sim.close());

  it("holds for random keys planted at random places in random replies to every call", async () => {
    let failures = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(key, { minLength: 1, maxLength: 3 }),
        fc.nat(),
        reply,
        call,
        async (keys, which, r, op) => {
          const planted = keys[which % keys.length] ?? "";
          sim.clearFaults();
          // Matched to the call, so the login before it is answered normally.
          sim.failNext({
            ...faultOf(planted, r),
            collection: op === "restart" ? "restart" : "zones",
          });
          const lines: string[] = [];
          const log = {
            debug: (f: Record<string, unknown>, m: string) => lines.push(m, JSON.stringify(f)),
            warn: (f: Record<string, unknown>, m: string) => lines.push(m, JSON.stringify(f)),
          };
          const client = new CnfClient({
            baseUrl: sim.url,
            credentials: new CnfCredentials("root", ""),
            sessions: new CnfSessionCache(),
            retry: { retries: 2, minDelayMs: 1, maxDelayMs: 2 },
            keys: () => Promise.resolve(new KeyMaterial(keys)),
            log,
          });
          const error = await run(client, op).then(
            () => undefined,
            (e: unknown) => e as Error,
          );
          const shown = [...lines];
          if (error !== undefined) {
            failures += 1;
            shown.push(error.message, String(error), JSON.stringify(error));
            const decision = planRuleDecision({
              rule: {
                key: "FirewallZone/lan0",
                generation: 2,
                resourceVersion: "7",
                deleting: false,
                hasFinalizer: true,
                status: undefined,
              },
              cnf: { kind: "found", deployment: "cnf", readyPods: 1, expectedPods: 1 },
              podResults: [
                { kind: "failed", failure: { class: "invalid", pod: "p", message: error.message } },
              ],
              keys: new KeyMaterial(keys),
              now: "2026-11-27T00:00:00Z",
            });
            shown.push(
              JSON.stringify(decision),
              JSON.stringify(planRuleEvent(undefined, decision)),
            );
          }
          const text = shown.join("\n");
          const leaks = keys.flatMap(windows).filter((w) => text.includes(w));
          expect(leaks).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
    // Most replies are failures (a 404 to a get, a 2xx to a delete or a restart are answers).
    expect(failures).toBeGreaterThan(100);
  });
});

async function run(client: CnfClient, op: string): Promise<unknown> {
  switch (op) {
    case "list":
      return client.list(zones);
    case "get":
      return client.get(zones, "lan0");
    case "update":
      return client.update(zones, samples.zone);
    case "create":
      return client.create(zones, { ...samples.zone, name: "lan9" });
    case "delete":
      return client.delete(zones, "lan0");
    default:
      return client.restartService("firewall");
  }
}
