/**
 * Typed errors of the rule registry. Callers branch on `code`, never on message text.
 */

export type RuleErrorCode =
  /** A spec (or whole CR) does not match its kind's schema; the CNF would never accept it. */
  | "InvalidSpec"
  /** A network named in a spec is not in the CNF Deployment's nfn-network annotation. */
  | "NetworkNotMapped"
  /** The CNF Deployment's nfn-network annotation is not the JSON shape ovn4nfv writes. */
  | "InvalidNetworkAnnotation"
  /** A kind (or plural) that is not one of the registry's rule kinds. */
  | "UnknownKind";

export class RuleError extends Error {
  override readonly name = "RuleError";
  constructor(
    readonly code: RuleErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** One problem found in a spec, with the dotted path of the field (`spec.members[0].metric`). */
export interface SpecIssue {
  readonly path: string;
  readonly message: string;
}

export class InvalidRuleSpecError extends RuleError {
  constructor(
    readonly kind: string,
    readonly issues: readonly SpecIssue[],
  ) {
    super(
      "InvalidSpec",
      `invalid ${kind}: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`,
    );
  }
}

export class NetworkNotMappedError extends RuleError {
  constructor(
    readonly network: string,
    readonly field: string,
    readonly known: readonly string[],
  ) {
    super(
      "NetworkNotMapped",
      known.length === 0
        ? `${field}: network ${network} is not mapped: the CNF Deployment has no k8s.plugin.opnfv.org/nfn-network interfaces`
        : `${field}: network ${network} is not in the CNF Deployment's k8s.plugin.opnfv.org/nfn-network annotation (known: ${known.join(", ")})`,
    );
  }
}

export class UnknownRuleKindError extends RuleError {
  constructor(
    readonly requested: string,
    readonly supported: readonly string[],
  ) {
    super(
      "UnknownKind",
      `unknown rule kind ${requested}; supported kinds: ${supported.join(", ")}`,
    );
  }
}
