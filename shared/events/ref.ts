/** Completing an ObjectRef from the fields an event supplied, with a precise error when it can't. */
import { IntakeError } from "./errors.js";
import type { ObjectRef } from "./types.js";

export interface PartialRef {
  readonly apiVersion?: string | undefined;
  readonly kind?: string | undefined;
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
}

export interface MissingRefMessage {
  /** Where each required field may be given, e.g. "data.kind or the ce-kind extension". */
  readonly sources: { readonly kind: string; readonly name: string };
  /** Text before "missing ...", e.g. "event dev.knative.apiserver.ref.add names no object: ". */
  readonly prefix: string;
  readonly suffix?: string;
}

export function completeRef(partial: PartialRef, message: MissingRefMessage): ObjectRef {
  const { kind, name } = partial;
  if (!kind || !name) {
    const missing = [
      kind ? "" : `"kind" (${message.sources.kind})`,
      name ? "" : `"name" (${message.sources.name})`,
    ].filter(Boolean);
    throw new IntakeError(
      "missing-ref-field",
      `${message.prefix}missing ${missing.join(" and ")}${message.suffix ?? ""}`,
    );
  }
  return {
    apiVersion: partial.apiVersion ?? "",
    kind,
    namespace: partial.namespace ?? "",
    name,
  };
}
