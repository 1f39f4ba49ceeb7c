/**
 * Secret values out of text that is about to be stored or shown (a status message, an Event, a
 * log line): a peer may echo a request body in its error, key material included.
 */
export const REDACTED_TEXT = "[redacted]";

/** `text` with every occurrence of each secret, raw or JSON-escaped, replaced. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length === 0) continue;
    // A PEM echoed inside a JSON body arrives with its newlines escaped.
    const escaped = JSON.stringify(secret).slice(1, -1);
    for (const form of new Set([secret, escaped])) out = out.split(form).join(REDACTED_TEXT);
  }
  return out;
}
