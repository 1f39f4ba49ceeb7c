/**
 * The one redaction of key material (pre-shared keys, private keys) out of every text that leaves
 * a function: log lines, statuses, Events, HTTP replies. A CNF may echo any key it holds in an
 * error, so callers pass every key of that CNF (docs/cnf.md#key-material), and redact before any
 * cut: a cut key would leak its prefix.
 */
import type { Log } from "./context.js";

export const REDACTED_TEXT = "[redacted]";

/**
 * A key read from a Secret shorter than this is refused (the rule Stalls): replacing a short
 * key in a text reveals it (`chec[redacted]ed`). One the CNF holds anyway (a plain field) withholds
 * every text that contains it.
 */
export const MIN_KEY_LENGTH = 8;

/** What a text that contains a key too short to redact safely is replaced with. */
export const WITHHELD_TEXT = "[message withheld: it may contain key material]";

/** A cut-off end of a key this long or longer is redacted too. */
const MIN_PARTIAL = 4;

/** The forms a key arrives in: raw, JSON-escaped (a PEM in a JSON body), whitespace-collapsed. */
function formsOf(secret: string): string[] {
  const escaped = JSON.stringify(secret).slice(1, -1);
  const collapsed = secret.replace(/\s+/g, " ");
  return [...new Set([secret, escaped, collapsed])];
}

/**
 * `text` with every occurrence of each secret (in any of its forms) replaced, and a text that
 * ends with the start of one, or starts with the end of one (cut by the CNF), redacted there. A
 * text that contains a secret shorter than MIN_KEY_LENGTH is withheld whole.
 */
export function redactSecrets(text: string, secrets: Iterable<string>): string {
  const forms: string[] = [];
  for (const secret of secrets) {
    if (secret.length === 0) continue;
    const ofSecret = formsOf(secret);
    if (secret.length < MIN_KEY_LENGTH && ofSecret.some((f) => text.includes(f)))
      return WITHHELD_TEXT;
    forms.push(...ofSecret);
  }
  // Longest first: a key that contains another is replaced whole.
  forms.sort((a, b) => b.length - a.length);
  let out = text;
  for (const form of forms) out = out.split(form).join(REDACTED_TEXT);
  for (const form of forms) out = withoutCutEnds(out, form);
  return out;
}

function withoutCutEnds(text: string, form: string): string {
  let out = text;
  // Longest first: the earliest start in the tail whose rest begins the key (or cut-off end).
  const first = form[0] ?? "";
  for (let i = Math.max(0, out.length - form.length + 1); i <= out.length - MIN_PARTIAL; i += 1) {
    if (out[i] === first && form.startsWith(out.slice(i))) {
      out = `${out.slice(0, i)}${REDACTED_TEXT}`;
      break;
    }
  }
  const last = form[form.length - 1] ?? "";
  for (let j = Math.min(out.length, form.length - 1); j >= MIN_PARTIAL; j -= 1) {
    if (out[j - 1] === last && form.endsWith(out.slice(0, j))) {
      out = `${REDACTED_TEXT}${out.slice(j)}`;
      break;
    }
  }
  return out;
}

/**
 * Every key a CNF could hold, as known while one event is handled. `complete` is false when some
 * could not be read (a Secret missing or forbidden): then a text from the CNF, which might echo
 * the unknown one, is withheld whole (redactEcho).
 */
export class KeyMaterial {
  private readonly secrets: readonly string[];
  constructor(
    secrets: Iterable<string>,
    readonly complete = true,
  ) {
    this.secrets = [...new Set(secrets)].filter((s) => s !== "");
  }

  static readonly NONE = new KeyMaterial([]);

  get size(): number {
    return this.secrets.length;
  }

  /**
   * Text we wrote (a status message, a log line), which quotes a CNF only through redactEcho: a
   * second pass over it. A short key is left to redactEcho, which withholds any CNF text holding
   * it; here it would withhold our own words (a Secret's name that contains it, say).
   */
  redact(text: string): string {
    const long = this.secrets.filter((s) => s.length >= MIN_KEY_LENGTH);
    return long.length === 0 ? text : redactSecrets(text, long);
  }

  /** Text the CNF sent (an error body, a garbled reply): may echo any key it holds. */
  redactEcho(text: string): string {
    if (!this.complete) return WITHHELD_TEXT;
    return this.secrets.length === 0 ? text : redactSecrets(text, this.secrets);
  }

  with(more: KeyMaterial): KeyMaterial {
    return new KeyMaterial([...this.secrets, ...more.secrets], this.complete && more.complete);
  }
}

/** Every string in `value` (objects and arrays walked) redacted by `keys`. */
function redactValue(value: unknown, keys: KeyMaterial): unknown {
  if (typeof value === "string") return keys.redact(value);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, keys));
  if (value instanceof Error) return keys.redact(value.message);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v, keys)]));
  }
  return value;
}

/** `log` with every line, message and fields, at every level, redacted by the keys known then. */
export function redactingLog(log: Log, keys: () => KeyMaterial): Log {
  const level =
    (write: (fields: Record<string, unknown>, message: string) => void) =>
    (fields: Record<string, unknown>, message: string) => {
      const now = keys();
      write(redactValue(fields, now) as Record<string, unknown>, now.redact(message));
    };
  return {
    info: level((f, m) => log.info(f, m)),
    warn: level((f, m) => log.warn(f, m)),
    error: level((f, m) => log.error(f, m)),
    debug: level((f, m) => log.debug(f, m)),
  };
}
