/** The finalizer list after adding or removing one, or null when there is nothing to write. */

/** An object's resourceVersion and finalizers as the caller read them. */
export interface KnownFinalizers {
  readonly resourceVersion: string;
  readonly finalizers: readonly string[];
}

export type FinalizerChange = "add" | "remove";

export function planFinalizers(
  current: readonly string[] | undefined,
  finalizer: string,
  change: FinalizerChange,
): string[] | null {
  const list = current ?? [];
  const present = list.includes(finalizer);
  if (change === "add") return present ? null : [...list, finalizer];
  return present ? list.filter((name) => name !== finalizer) : null;
}
