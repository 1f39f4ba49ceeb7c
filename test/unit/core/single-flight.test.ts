// SingleFlight: callers of a key whose call is running share it; once it settles, the next
// caller starts a new one (nothing is cached, failures included).
import { SingleFlight } from "../../../shared/core/single-flight.js";

describe("SingleFlight", () => {
  it("shares a running call per key, and calls again once it settled", async () => {
    const flight = new SingleFlight<number>();
    let calls = 0;
    const call = () => Promise.resolve(++calls);
    const [a, b, other] = await Promise.all([
      flight.run("k", call),
      flight.run("k", call),
      flight.run("other", call),
    ]);
    expect([a, b, other]).toEqual([1, 1, 2]);
    expect(await flight.run("k", call)).toBe(3);
  });

  it("does not keep a failure: the next caller tries again", async () => {
    const flight = new SingleFlight<string>();
    await expect(flight.run("k", () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(await flight.run("k", () => Promise.resolve("up"))).toBe("up");
  });
});
