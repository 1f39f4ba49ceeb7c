import {
  KeyMaterial,
  REDACTED_TEXT,
  WITHHELD_TEXT,
  redactSecrets,
} from "../../../shared/core/redact.js";

describe("secrets out of text a peer may have echoed", () => {
  it.each([
    ["raw", "bad key psk-12345 given", ["psk-12345"], `bad key ${REDACTED_TEXT} given`],
    ["every occurrence", "psk-12345/psk-12345", ["psk-12345"], `${REDACTED_TEXT}/${REDACTED_TEXT}`],
    [
      "a PEM inside an echoed JSON body (newlines escaped)",
      'body {"key":"-----BEGIN KEY-----\\nabc\\n-----END KEY-----"}',
      ["-----BEGIN KEY-----\nabc\n-----END KEY-----"],
      `body {"key":"${REDACTED_TEXT}"}`,
    ],
    [
      "a PEM whose newlines were collapsed",
      "bad cert -----BEGIN KEY----- abc -----END KEY----- here",
      ["-----BEGIN KEY-----\nabc\n-----END KEY-----"],
      `bad cert ${REDACTED_TEXT} here`,
    ],
    [
      "a key that contains another, whole",
      "k=secret-long-one",
      ["secret-l", "secret-long-one"],
      `k=${REDACTED_TEXT}`,
    ],
    [
      "the start of a key the CNF cut off",
      "stored PSK-SUPE",
      ["PSK-SUPERSECRET"],
      `stored ${REDACTED_TEXT}`,
    ],
    [
      "the end of a key at the start",
      "ERSECRET was bad",
      ["PSK-SUPERSECRET"],
      `${REDACTED_TEXT} was bad`,
    ],
    ["no secrets: unchanged", "plain text", [], "plain text"],
  ])("%s", (_title, text, secrets, expected) => {
    expect(redactSecrets(text, secrets)).toBe(expected);
  });

  it("withholds a whole text that contains a key too short to replace without revealing it", () => {
    expect(redactSecrets("checked", ["k"])).toBe(WITHHELD_TEXT);
    expect(redactSecrets("nothing here", ["zz"])).toBe("nothing here");
  });

  it("withholds a CNF's text holding a short key, and leaves our own words to that", () => {
    const keys = new KeyMaterial(["k", "psk-12345678"]);
    expect(keys.redactEcho("checked psk-12345678")).toBe(WITHHELD_TEXT);
    expect(keys.redact("Secret ipsec-keys psk-12345678")).toBe(
      `Secret ipsec-keys ${REDACTED_TEXT}`,
    );
  });

  it("withholds an echo whole while some key of the CNF is unknown", () => {
    const keys = new KeyMaterial(["psk-12345678"], false);
    expect(keys.redactEcho("anything at all")).toBe(WITHHELD_TEXT);
    expect(keys.redact("we wrote psk-12345678")).toBe(`we wrote ${REDACTED_TEXT}`);
    expect(new KeyMaterial(["psk-12345678"]).with(keys).complete).toBe(false);
  });
});
