// The CNF client's side of the one redaction (docs/cnf.md#key-material): it asks for the CNF's
// keys only when a reply is to become a text, and a withheld text still classifies.
import { startCnfSim, type CnfSim } from "../../../dev/cnf-sim/index.js";
import { KeyMaterial, WITHHELD_TEXT } from "../../../shared/core/redact.js";
import {
  CnfClient,
  CnfCredentials,
  CnfHttpError,
  CnfSessionCache,
  classifyCnfFailure,
} from "../../../shared/cnf/index.js";

const zones = { module: "firewall", collection: "zones" } as const;

describe("CNF client redaction", () => {
  let sim: CnfSim;
  let lookups: number;
  const client = (keys: KeyMaterial) =>
    new CnfClient({
      baseUrl: sim.url,
      credentials: new CnfCredentials("root", ""),
      sessions: new CnfSessionCache(),
      retry: { retries: 0 },
      keys: () => {
        lookups += 1;
        return Promise.resolve(keys);
      },
    });

  beforeEach(async () => {
    lookups = 0;
    sim = await startCnfSim({ host: "127.0.0.45" });
  });
  afterEach(() => sim.close());

  it("looks up no key for good replies, nor for a 404 to a get or a delete (absent is an answer)", async () => {
    const cnf = client(new KeyMaterial(["psk-0123456789"]));
    expect(await cnf.list(zones)).toEqual([]);
    expect(await cnf.get(zones, "nope")).toBeUndefined();
    expect(await cnf.delete(zones, "nope")).toBe("absent");
    expect(lookups).toBe(0);
  });

  it("looks the keys up once for the first bad reply, and redacts it", async () => {
    const cnf = client(new KeyMaterial(["psk-0123456789"]));
    sim.failNext({
      kind: "status",
      status: 500,
      message: "psk-0123456789 x",
      collection: "zones",
      count: 2,
    });
    await expect(cnf.list(zones)).rejects.toThrow("HTTP 500 [redacted] x");
    await expect(cnf.list(zones)).rejects.toThrow("HTTP 500 [redacted] x");
    expect(lookups).toBe(1);
  });

  it("classifies a withheld message by what the CNF said (a missing policy stays a dependency)", async () => {
    const cnf = client(new KeyMaterial([], false));
    sim.failNext({
      kind: "status",
      status: 400,
      message: "Zone[lan9] is not defined",
      collection: "zones",
      count: 1,
    });
    const error = await cnf
      .update(zones, { name: "z1", network: ["net0"] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CnfHttpError);
    expect((error as CnfHttpError).cnfMessage).toBe(WITHHELD_TEXT);
    expect(classifyCnfFailure(error)).toBe("dependency");
  });
});
