/** The object a ClusterLink function's event names, checked against the kinds it takes. Pure. */
import type { ObjectRef } from "../events/types.js";

export interface MalformedTrigger {
  readonly kind: "malformed";
  readonly code: "UnknownKind" | "MissingNamespace";
  readonly reason: string;
}

/** "A", "A and B", "A, B and C". */
const listed = (kinds: readonly string[]): string =>
  kinds.length < 2 ? kinds.join("") : `${kinds.slice(0, -1).join(", ")} and ${kinds.at(-1)}`;

/** The namespaced object `ref` names when it is of one of `kinds`; else why the event is malformed. */
export function namespacedTrigger<K extends string>(
  ref: ObjectRef,
  fn: string,
  kinds: readonly K[],
): { readonly kind: K; readonly namespace: string; readonly name: string } | MalformedTrigger {
  const { kind, namespace, name } = ref;
  if (!(kinds as readonly string[]).includes(kind)) {
    const reason = `${fn} handles ${listed(kinds)} events, not ${kind}`;
    return { kind: "malformed", code: "UnknownKind", reason };
  }
  if (namespace === "") {
    return {
      kind: "malformed",
      code: "MissingNamespace",
      reason: `${kind} ${name} has no namespace`,
    };
  }
  return { kind: kind as K, namespace, name };
}
