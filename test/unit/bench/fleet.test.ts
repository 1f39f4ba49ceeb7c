/**
 * The fleet rows' pieces that decide their numbers (bench/lib/fleet, bench/rows/fleet.ts): the
 * rules of many CNFs in one namespace, the floor each scenario is compared with, and the audit
 * log read as the functions' API requests by verb.
 */
import { appendFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fleetRules } from "../../../bench/lib/fleet/scenarios.js";
import { AuditCounter } from "../../../bench/lib/fleet/world.js";
import { fleetFloor } from "../../../bench/rows/fleet.js";

describe("fleetRules", () => {
  it("names each CNF's rules apart and points each rule at its own CNF's policy", () => {
    const all = [0, 1].flatMap((c) => fleetRules(c, 200));
    expect(new Set(all.map((r) => `${r.kind}/${r.name}`)).size).toBe(400);
    const rule = fleetRules(7, 200).find((r) => r.kind === "Mwan3Rule");
    expect(rule?.name).toBe("c7rule0");
    expect(rule?.spec["policy"]).toBe("c7pol0");
  });
});

describe("fleetFloor", () => {
  it("counts a read, a finalizer and a status per rule created", () => {
    expect(fleetFloor("create", 50, 200)).toEqual({
      apiRequests: 30_000,
      apiWrites: 20_000,
      cnfRequests: 100 * 204,
      restartsMax: 1,
    });
  });

  it("counts a restart by pods and CNFs, not by rules, and writes nothing to the API", () => {
    expect(fleetFloor("reboot", 50, 200)).toMatchObject({ apiRequests: 200, apiWrites: 0 });
    expect(fleetFloor("reboot", 50, 20).apiRequests).toBe(200);
    expect(fleetFloor("rollout", 50, 200)).toMatchObject({ apiRequests: 300, apiWrites: 0 });
  });
});

describe("AuditCounter", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "fleet-audit-"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const line = (verb: string, resource: string, subresource?: string, stage = "ResponseComplete") =>
    `${JSON.stringify({ stage, verb, objectRef: { resource, ...(subresource ? { subresource } : {}) } })}\n`;

  it("counts completed requests by verb and resource, across appends and a line cut in two", async () => {
    const file = path.join(dir, "audit.log");
    await writeFile(file, line("get", "mwan3rules") + line("patch", "mwan3rules", "status"));
    const audit = new AuditCounter(file);
    await audit.update();
    const half = line("list", "pods");
    await appendFile(file, line("get", "mwan3rules", undefined, "Panic") + half.slice(0, 10));
    await audit.update();
    await appendFile(file, half.slice(10) + line("watch", "pods", undefined, "ResponseStarted"));
    await audit.update();
    expect(Object.fromEntries(audit.snapshot())).toEqual({
      "get mwan3rules": 2,
      "patch mwan3rules/status": 1,
      "list pods": 1,
    });
  });
});
