/**
 * Kubernetes MicroTime (Events' eventTime, Leases' acquireTime and renewTime): RFC 3339 with
 * exactly six fractional digits, which the API server requires; JavaScript gives three.
 */
export function microTime(time: Date | string): string {
  const date = typeof time === "string" ? new Date(time) : time;
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
