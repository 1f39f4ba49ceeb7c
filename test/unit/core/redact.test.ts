import { REDACTED_TEXT, redactSecrets } from "../../../shared/core/redact.js";

describe("secrets out of text a peer may have echoed", () => {
  it.each([
    ["raw", "bad key psk-123 given", ["psk-123"], `bad key ${REDACTED_TEXT} given`],
    ["every occurrence", "psk-123/psk-123", ["psk-123"], `${REDACTED_TEXT}/${REDACTED_TEXT}`],
    [
      "a PEM inside an echoed JSON body (newlines escaped)",
      'body {"key":"-----BEGIN KEY-----\\nabc\\n-----END KEY-----"}',
      ["-----BEGIN KEY-----\nabc\n-----END KEY-----"],
      `body {"key":"${REDACTED_TEXT}"}`,
    ],
    ["no secrets: unchanged", "plain text", [], "plain text"],
  ])("%s", (_title, text, secrets, expected) => {
    expect(redactSecrets(text, secrets)).toBe(expected);
  });
});
