/**
 * Kubernetes label key and value syntax (apimachinery's IsQualifiedName and IsValidLabelValue),
 * used to reject selectors the API server itself would refuse to evaluate, and the DNS-1035 label
 * a Service's name must be (IsDNS1035Label), for names we derive from other objects' names.
 */

/** A Kubernetes label set; absent labels are treated as the empty set. */
export type Labels = Readonly<Record<string, string>>;

const NAME_MAX_LENGTH = 63;
const PREFIX_MAX_LENGTH = 253;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** A DNS-1035 label, as a pattern both RE2 (CEL) and JavaScript read alike. */
export const DNS1035_LABEL_PATTERN = "^[a-z]([-a-z0-9]*[a-z0-9])?$";
const DNS1035_LABEL = new RegExp(DNS1035_LABEL_PATTERN);
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function labelNameProblem(name: string): string | null {
  if (name.length === 0) return "name part must be non-empty";
  if (name.length > NAME_MAX_LENGTH)
    return `name part must be no more than ${NAME_MAX_LENGTH} characters`;
  if (!LABEL_NAME.test(name)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return null;
}

function prefixProblem(prefix: string): string | null {
  if (prefix.length === 0) return "prefix part must be non-empty";
  if (prefix.length > PREFIX_MAX_LENGTH)
    return `prefix part must be no more than ${PREFIX_MAX_LENGTH} characters`;
  if (!DNS1123_SUBDOMAIN.test(prefix)) return "prefix part must be a lowercase RFC 1123 subdomain";
  return null;
}

/** An object name most kinds accept (DNS-1123 subdomain, at most 253 characters). */
export const isDnsSubdomain = (name: string): boolean =>
  name.length <= PREFIX_MAX_LENGTH && DNS1123_SUBDOMAIN.test(name);

/** Why `key` is not a valid label key ("[prefix/]name"), or null when it is. */
export function labelKeyProblem(key: string): string | null {
  const parts = key.split("/");
  if (parts.length > 2) return "a label key has at most one '/'";
  const [first = "", second] = parts;
  if (second === undefined) return labelNameProblem(first);
  return prefixProblem(first) ?? labelNameProblem(second);
}

/** Why `value` is not a valid label value, or null when it is ("" is valid). */
export function labelValueProblem(value: string): string | null {
  if (value.length > NAME_MAX_LENGTH) return `must be no more than ${NAME_MAX_LENGTH} characters`;
  if (!LABEL_VALUE.test(value)) {
    return "must be empty or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return null;
}

/** Why `name` is not a DNS-1035 label (what a Service's name must be), or null when it is. */
export function dns1035LabelProblem(name: string): string | null {
  if (name.length > NAME_MAX_LENGTH) return `must be no more than ${NAME_MAX_LENGTH} characters`;
  if (!DNS1035_LABEL.test(name)) {
    return "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
  }
  return null;
}
