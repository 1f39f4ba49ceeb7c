import {
  NFN_NETWORK_ANNOTATION,
  RuleError,
  networkMapOfDeployment,
  parseNfnNetworkAnnotation,
} from "../../../shared/kinds/index.js";

// The seed's CNF Deployment annotation, verbatim (multi-line, with its spacing).
const SEED_ANNOTATION = `{ "type": "ovn4nfv", "interface": [
    {
      "defaultGateway": "false",
      "interface": "net0",
      "name": "ovn-priv-net"
    },
    {
      "defaultGateway": "false",
      "interface": "net1",
      "name": "ovn-provider-net1"
    },
    {
      "defaultGateway": "false",
      "interface": "net2",
      "name": "ovn-provider-net2"
    }
  ]
}`;

/** The error `fn` throws (fails the test when it returns). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe("the nfn-network annotation parser", () => {
  it("maps each network name to its pod interface", () => {
    expect([...parseNfnNetworkAnnotation(SEED_ANNOTATION)]).toEqual([
      ["ovn-priv-net", "net0"],
      ["ovn-provider-net1", "net1"],
      ["ovn-provider-net2", "net2"],
    ]);
  });

  it("reads the annotation from a Deployment's pod template", () => {
    const deployment = {
      spec: {
        template: { metadata: { annotations: { [NFN_NETWORK_ANNOTATION]: SEED_ANNOTATION } } },
      },
    };
    expect(networkMapOfDeployment(deployment).get("ovn-provider-net2")).toBe("net2");
    expect(networkMapOfDeployment({}).size).toBe(0);
    expect(networkMapOfDeployment({ spec: { template: { metadata: {} } } }).size).toBe(0);
  });

  it.each([
    ["absent", undefined],
    ["blank", "  "],
  ])("gives an empty map when the annotation is %s", (_what, value) => {
    expect(parseNfnNetworkAnnotation(value).size).toBe(0);
  });

  it.each([
    ["not JSON", "{interface:", "is not valid JSON"],
    ["without interface[]", '{"type":"ovn4nfv"}', "at interface"],
    ["with an entry lacking a name", '{"interface":[{"interface":"net1"}]}', "at interface.0.name"],
    [
      "mapping one network to two interfaces",
      '{"interface":[{"name":"a","interface":"net1"},{"name":"a","interface":"net2"}]}',
      "maps network a to both net1 and net2",
    ],
  ])("rejects an annotation %s with InvalidNetworkAnnotation", (_what, value, fragment) => {
    expect(() => parseNfnNetworkAnnotation(value)).toThrow(RuleError);
    expect(thrown(() => parseNfnNetworkAnnotation(value))).toMatchObject({
      code: "InvalidNetworkAnnotation",
    });
    expect(() => parseNfnNetworkAnnotation(value)).toThrow(fragment);
  });
});
