// Which versions count as the echo of our own write (own-writes.ts): only those whose write
// changed nothing but what we wrote, each skipped once.
import { OwnWrites, echoBasisOf } from "../../../shared/sync/own-writes.js";
import type { ObjectMeta } from "../../../shared/core/objects.js";

const read: ObjectMeta = {
  name: "policy1",
  uid: "u1",
  resourceVersion: "10",
  generation: 2,
  labels: { sdewanPurpose: "one", team: "a" },
};
const answer = (changes: Partial<ObjectMeta>): ObjectMeta => ({ ...read, ...changes });

describe("the echo of our own write", () => {
  it("is the version our write produced, skipped once, several per rule (claim, mark, status)", () => {
    const writes = new OwnWrites();
    writes.recordWrite(echoBasisOf(read), answer({ resourceVersion: "11" }));
    writes.recordWrite(echoBasisOf(read), answer({ resourceVersion: "12" }));
    writes.finish("u1");
    expect(writes.takeEcho("u1", "10", "carried")).toBe(false);
    expect(writes.takeEcho("u1", "12", "carried")).toBe(true);
    expect(writes.takeEcho("u1", "12", "carried")).toBe(false);
    expect(writes.takeEcho("u1", "11", "carried")).toBe(true);
    expect(writes.takeEcho("u2", "11", "carried")).toBe(false);
  });

  it("read live (Reference mode), only an in-sync status write is an echo: a live version cannot tell a redelivery from an echo", () => {
    const writes = new OwnWrites();
    writes.recordWrite(echoBasisOf(read), answer({ resourceVersion: "11" }));
    writes.recordWrite(echoBasisOf(read), answer({ resourceVersion: "12" }), true);
    writes.finish("u1");
    expect(writes.takeEcho("u1", "11", "read")).toBe(false);
    expect(writes.takeEcho("u1", "12", "read")).toBe(true);
  });

  it("is not skipped while the delivery that wrote it may still retry; an in-sync status is", () => {
    const writes = new OwnWrites();
    writes.recordWrite(echoBasisOf(read), answer({ resourceVersion: "11" }));
    writes.recordWrite(echoBasisOf(read), answer({ resourceVersion: "12" }), true);
    expect(writes.takeEcho("u1", "11", "carried")).toBe(false);
    expect(writes.takeEcho("u1", "12", "carried")).toBe(true);
    writes.finish("u1");
    expect(writes.takeEcho("u1", "11", "carried")).toBe(true);
  });

  it.each([
    ["a label moved it to another CNF", { labels: { sdewanPurpose: "two", team: "a" } }],
    ["an annotation changed", { annotations: { note: "x" } }],
    ["its spec changed (generation)", { generation: 3 }],
    ["its deletion began", { deletionTimestamp: "2026-11-25T18:00:00Z" }],
    ["it is a new rule of the same name", { uid: "u2" }],
  ])("is not recorded when, between our read and our write, %s", (_, changes) => {
    const writes = new OwnWrites();
    const written = answer({ resourceVersion: "11", ...changes });
    writes.recordWrite(echoBasisOf(read), written, true);
    expect(writes.takeEcho(written.uid, "11", "carried")).toBe(false);
  });

  it("does not depend on the order labels are listed in", () => {
    const reordered = answer({ labels: { team: "a", sdewanPurpose: "one" } });
    expect(echoBasisOf(reordered)).toBe(echoBasisOf(read));
  });

  it("keeps the last four versions of a rule", () => {
    const writes = new OwnWrites();
    for (const v of ["11", "12", "13", "14", "15"]) {
      writes.recordWrite(echoBasisOf(read), answer({ resourceVersion: v }), true);
    }
    expect(writes.takeEcho("u1", "11", "carried")).toBe(false);
    expect(["12", "13", "14", "15"].map((v) => writes.takeEcho("u1", v, "carried"))).toEqual([
      true,
      true,
      true,
      true,
    ]);
  });
});
