// cyrb53's values end up in labels stored in the API server (egress and netpol member indexes):
// a change to the hash would orphan every stored index. These values pin it.
import { cyrb53 } from "../../../shared/core/cyrb53.js";
import { groupLabelValue } from "../../../shared/egress/member-index.js";
import { memberLabelKey, peerSetLabelValue } from "../../../shared/netpol/member-index.js";

const as53Bits = ({ high, low }: { high: number; low: number }) =>
  4294967296 * (high & 0x1fffff) + low;

describe("cyrb53", () => {
  it.each([
    ["a", 7929297801672961],
    ["b", 8684336938537663],
    ["revenge", 4051478007546757],
    ["revenue", 8309097637345594],
  ])("gives the published 53-bit value for %j", (text, value) => {
    expect(as53Bits(cyrb53(text))).toBe(value);
  });

  it("keeps the label values the member indexes have stored", () => {
    expect(groupLabelValue("ns1/egress-a")).toBe("04474a3b1655");
    expect(memberLabelKey("ns1/pod-a")).toBe(
      "netpol.sdewan.akraino.org/m-04d8b09af147821051072af4",
    );
    expect(peerSetLabelValue("ns1/np_ingress_0")).toBe("0f6e08d5ba4803163a33c8c7");
  });
});
