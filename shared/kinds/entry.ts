/**
 * The registry entry: everything the functions need to know about one rule kind, as data and
 * pure functions. `defineRuleKind` turns a typed definition into the erased entry the registry
 * holds, so callers never need the kind's TypeScript types and never switch on a kind name.
 */
import * as z from "zod";
import {
  PARSE_OPTIONS,
  RULE_API_VERSION,
  issuesFromZod,
  ruleMetadataSchema,
  ruleStatusSchema,
  specSizeProblem,
  type RuleMetadata,
  type RuleStatus,
} from "./common.js";
import { InvalidRuleSpecError, type SpecIssue } from "./errors.js";
import {
  cnfListReplySchema,
  cnfReplySchema,
  diffCnfObjects,
  normaliseCnfObject,
  type CnfObject,
  type CnfShape,
  type NormalisedRecord,
} from "./cnf-shape.js";
import type { NetworkInterfaceMap } from "./network-map.js";

export const RULE_KIND_NAMES = [
  "Mwan3Policy",
  "Mwan3Rule",
  "FirewallZone",
  "FirewallSNAT",
  "FirewallDNAT",
  "FirewallForwarding",
  "FirewallRule",
  "IpsecProposal",
  "IpsecSite",
  "IpsecHost",
  "CNFService",
] as const;
export type RuleKindName = (typeof RULE_KIND_NAMES)[number];

/** CNF REST modules (`sdewan/<module>/v1/...`) and the services restarted after a change. */
export type CnfModule = "mwan3" | "firewall" | "ipsec" | "service";
export type CnfServiceName = "mwan3" | "firewall" | "ipsec";

export interface CnfCollection {
  readonly module: CnfModule;
  /** URL segment and the key of the GET list reply, e.g. `policies`. */
  readonly collection: string;
  /** Collection path relative to `/cgi-bin/luci/`, e.g. `sdewan/mwan3/v1/policies`. */
  readonly path: string;
  /** `PUT sdewan/v1/service/<name>` `{"action":"restart"}` once per pod after a change; null = none. */
  readonly restartService: CnfServiceName | null;
  /** How to change an existing object: PUT (upsert), or DELETE then POST where the CNF has no PUT. */
  readonly update: "put" | "delete-then-create";
  /** Shape of the object body, for normalised comparison and reply validation. */
  readonly shape: CnfShape;
}

/** A reference from one rule to another rule of the same CNF (same namespace, same purpose). */
export interface RuleReference {
  readonly kind: RuleKindName;
  readonly name: string;
  /** Where in the referring CR, e.g. `spec.connections[0].crypto_proposal[1]`. */
  readonly field: string;
}

/** A Kubernetes network a spec names; toCnf translates it to a pod interface. */
export interface NetworkUse {
  readonly network: string;
  /** e.g. `spec.members[1].network`. */
  readonly field: string;
}

/** What conversion needs from outside the CR: the CNF Deployment's network -> interface map. */
export interface ConversionContext {
  readonly networks: NetworkInterfaceMap;
}

/** The minimum of a CR that conversion reads. A parsed RuleCr fits. */
export interface RuleCrInput {
  readonly metadata: { readonly name: string };
  readonly spec: unknown;
}

/** A rule CR as read from the API server, validated; `spec` is the kind's spec. */
export interface RuleCr<Spec = Readonly<Record<string, unknown>>> {
  readonly apiVersion: typeof RULE_API_VERSION;
  readonly kind: RuleKindName;
  readonly metadata: RuleMetadata;
  readonly spec: Spec;
  readonly status?: RuleStatus | undefined;
}

export type ParseResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly issues: readonly SpecIssue[]; readonly message: string };

/** Rules for metadata.name beyond Kubernetes' own (the CNF stores names in UCI). */
export interface NameRule {
  readonly pattern?: RegExp;
  readonly maxLength?: number;
  /** Why, for the error message. */
  readonly reason: string;
  /** How the name is stored on the CNF, when not as it is (UCI section names: fields.ts). */
  readonly cnfName?: (name: string) => string;
}

/** Names the i-th generated rule of a kind this one references (the generator wraps i). */
export type ExampleRef = (kind: RuleKindName, i: number) => string;

/**
 * Generated examples of a kind, for load (bench, soak): what a workload needs to create and
 * change rules of this kind without knowing it. Tests hold every kind's examples valid.
 */
export interface RuleExample<Spec = Readonly<Record<string, unknown>>> {
  /** Generated rules are named `<namePrefix><i>` (short: the CNF may limit names). */
  readonly namePrefix: string;
  /** The i-th valid spec of a set; rules it references are named by `ref`. */
  readonly spec: (i: number, ref: ExampleRef) => Spec;
  /**
   * A merge patch of the spec that keeps it valid and its references as they are, varied by
   * `n` (any non-negative integer). Absent: the kind has no such change.
   */
  readonly change?: (n: number) => Partial<Spec>;
}

/** One rule kind, erased: every function accepts unknown input and validates it itself. */
export interface RuleKindEntry {
  readonly kind: RuleKindName;
  readonly apiVersion: typeof RULE_API_VERSION;
  readonly plural: string;
  readonly singular: string;
  readonly listKind: string;
  readonly shortNames: readonly string[];
  readonly finalizer: string;
  /** One sentence for the CRD description and `kubectl explain`. */
  readonly description: string;
  readonly specSchema: z.ZodType<Readonly<Record<string, unknown>>>;
  /** Full CR: apiVersion, kind, metadata (with the kind's name rule), spec, optional status. */
  readonly crSchema: z.ZodType<RuleCr>;
  readonly cnf: CnfCollection;
  /** GET item reply from the CNF. */
  readonly cnfObjectSchema: z.ZodType<Readonly<Record<string, unknown>>>;
  /** GET collection reply from the CNF: `{"<collection>": [...]}`. */
  readonly cnfListSchema: z.ZodType<
    Readonly<Record<string, readonly Readonly<Record<string, unknown>>[]>>
  >;
  /** Kinds this kind can reference; they are applied first and deleted last. */
  readonly dependsOn: readonly RuleKindName[];
  /** Apply order: lower first. Delete in reverse. Greater than every kind in dependsOn. */
  readonly applyRank: number;
  readonly nameRule: NameRule | null;
  readonly example: RuleExample;

  /** Whether a rule of this kind may carry key material (secretValues): the CNF may echo it. */
  readonly carriesKeys: boolean;
  /** Null when the name is acceptable, else why not. */
  checkName(name: string): string | null;
  parseSpec(spec: unknown): ParseResult<Readonly<Record<string, unknown>>>;
  parseCr(raw: unknown): ParseResult<RuleCr>;
  /** References to other rules; throws InvalidRuleSpecError on an invalid spec. */
  references(spec: unknown): RuleReference[];
  /** Networks the spec names (must be in the CNF's nfn-network map); throws InvalidRuleSpecError. */
  networks(spec: unknown): NetworkUse[];
  /**
   * Key material the spec carries (pre-shared keys, private keys): never to appear in a status,
   * an Event or a log, even when the CNF echoes it back in an error. [] when the spec does not parse.
   */
  secretValues(spec: unknown): string[];
  /**
   * The Secret references of a spec ({name, key} per field that gives one); [] when the spec
   * does not parse. The function reads them when applying (shared/sync/secret-refs.ts).
   */
  secretRefs(spec: unknown): SecretKeyRefUse[];
  /**
   * Names the spec gives that must be unique on one CNF across every rule of the kinds with the
   * same `uniqueNameScope` ([] when the spec does not parse, or the kind has none).
   */
  cnfUniqueNames(spec: unknown): CnfUniqueName[];
  /** Kinds whose cnfUniqueNames share one namespace on the CNF have the same scope; null: none. */
  readonly uniqueNameScope: string | null;
  /** Key-material fields given in plain text where a Secret reference could be ([] if none). */
  plainSecretFields(spec: unknown): { readonly field: string; readonly refField: string }[];
  /** The CNF request body; never mutates `cr`. Throws InvalidRuleSpecError or NetworkNotMappedError. */
  toCnf(cr: RuleCrInput, ctx: ConversionContext): CnfObject;
  /** Whether a CNF object (from a GET list) is one this kind manages; kinds sharing a collection differ here. */
  /** The name of the rule's object on the CNF ("-" mapped for UCI section names). */
  cnfObjectName(name: string): string;
  ownsCnfObject(obj: Readonly<Record<string, unknown>>): boolean;
  normaliseCnf(obj: unknown): NormalisedRecord;
  /** True when the CNF holds `desired` (normalised comparison). */
  cnfEqual(desired: CnfObject, actual: unknown): boolean;
  /** Fields that differ, for logs and status messages. */
  cnfDiff(desired: CnfObject, actual: unknown): string[];
}

/**
 * A spec field given as a reference to a Secret's key instead of a plain value: `field` is the
 * plain field it stands for, `refField` the field holding `{name, key}`.
 */
export interface SecretKeyRefUse {
  readonly field: string;
  readonly refField: string;
  readonly name: string;
  readonly key: string;
}

/** A name that must be unique on the CNF, e.g. an ipsec connection name (a UCI section). */
export interface CnfUniqueName {
  /** What the name names, e.g. "connection name". */
  readonly what: string;
  readonly name: string;
  /** Where the spec gives it, e.g. spec.connections[0].name. */
  readonly field: string;
}

/** The typed definition one kind module writes. */
export interface RuleKindDefinition<Spec extends Readonly<Record<string, unknown>>> {
  readonly kind: RuleKindName;
  readonly plural: string;
  readonly shortNames: readonly string[];
  readonly finalizer: string;
  readonly description: string;
  /** Builds the spec's schema; called once, when the kind is first used. */
  readonly specSchema: () => z.ZodType<Spec>;
  readonly cnf: Omit<CnfCollection, "path">;
  readonly dependsOn: readonly RuleKindName[];
  readonly applyRank: number;
  readonly nameRule: NameRule | null;
  readonly references: (spec: Spec) => RuleReference[];
  readonly networks?: (spec: Spec) => NetworkUse[];
  /** Key material in the spec (see RuleKindEntry.secretValues). */
  readonly secrets?: (spec: Spec) => readonly (string | undefined)[];
  /** Plain fields the spec may give as Secret references (see RuleKindEntry.secretRefs). */
  readonly secretRefFields?: Readonly<Record<string, string>>;
  /** Names unique per CNF across the kinds of this CNF module (see RuleKindEntry.cnfUniqueNames). */
  readonly cnfUniqueNames?: (spec: Spec) => readonly CnfUniqueName[];
  readonly toCnf: (name: string, spec: Spec, ctx: ConversionContext) => CnfObject;
  readonly ownsCnfObject?: (obj: Readonly<Record<string, unknown>>) => boolean;
  readonly example: RuleExample<Spec>;
}

const cnfObjectName = (rule: NameRule | null, name: string): string =>
  rule?.cnfName === undefined ? name : rule.cnfName(name);

function nameProblem(rule: NameRule | null, name: string): string | null {
  if (rule === null) return null;
  if (rule.maxLength !== undefined && name.length > rule.maxLength) {
    return `name ${name} is ${name.length} characters; at most ${rule.maxLength} allowed (${rule.reason})`;
  }
  if (rule.pattern !== undefined && !rule.pattern.test(name)) {
    return `name ${name} must match ${rule.pattern.source} (${rule.reason})`;
  }
  return null;
}

function toResult<T>(
  parsed: z.ZodSafeParseResult<T>,
  prefix: string,
  kind: string,
): ParseResult<T> {
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = issuesFromZod(parsed.error, prefix);
  return { ok: false, issues, message: new InvalidRuleSpecError(kind, issues).message };
}

/**
 * `build`, run on the first call only. A kind's schemas are built when first used: a function
 * process serving one kind's CRs leaves the other kinds' unbuilt (issue 28 item 5).
 */
function once<T>(build: () => T): () => T {
  let built: { readonly value: T } | undefined;
  return () => (built ??= { value: build() }).value;
}

export function defineRuleKind<Spec extends Readonly<Record<string, unknown>>>(
  def: RuleKindDefinition<Spec>,
): RuleKindEntry {
  const singular = def.kind.toLowerCase();
  const rawSpecSchema = once(def.specSchema);
  // The whole-spec cap (RULE_SPEC_MAX_BYTES) on top of the kind's own field limits.
  const specSchema = once((): z.ZodType<Spec> =>
    rawSpecSchema().superRefine((spec, ctx) => {
      const problem = specSizeProblem(spec);
      if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
    }),
  );
  const crSchema = once(
    () =>
      z.object({
        apiVersion: z.literal(RULE_API_VERSION),
        kind: z.literal(def.kind),
        metadata: ruleMetadataSchema.superRefine((meta, ctx) => {
          const problem = nameProblem(def.nameRule, meta.name);
          if (problem !== null) ctx.addIssue({ code: "custom", path: ["name"], message: problem });
        }),
        spec: specSchema(),
        status: ruleStatusSchema.optional(),
      }) as unknown as z.ZodType<RuleCr>,
  );
  const shape = def.cnf.shape;
  const replySchema = once(() => cnfReplySchema(shape));
  const listSchema = once(() => cnfListReplySchema(def.cnf.collection, shape));

  const specOrThrow = (spec: unknown): Spec => {
    const parsed = specSchema().safeParse(spec, PARSE_OPTIONS);
    if (parsed.success) return parsed.data;
    throw new InvalidRuleSpecError(def.kind, issuesFromZod(parsed.error, "spec"));
  };

  return {
    kind: def.kind,
    apiVersion: RULE_API_VERSION,
    plural: def.plural,
    singular,
    listKind: `${def.kind}List`,
    shortNames: def.shortNames,
    finalizer: def.finalizer,
    description: def.description,
    get specSchema() {
      return specSchema();
    },
    get crSchema() {
      return crSchema();
    },
    cnf: { ...def.cnf, path: `sdewan/${def.cnf.module}/v1/${def.cnf.collection}` },
    get cnfObjectSchema() {
      return replySchema();
    },
    get cnfListSchema() {
      return listSchema();
    },
    dependsOn: def.dependsOn,
    applyRank: def.applyRank,
    nameRule: def.nameRule,
    example: def.example,
    carriesKeys: def.secrets !== undefined,
    checkName: (name) => nameProblem(def.nameRule, name),
    parseSpec: (spec) => toResult(specSchema().safeParse(spec, PARSE_OPTIONS), "spec", def.kind),
    parseCr: (raw) => toResult(crSchema().safeParse(raw, PARSE_OPTIONS), "", def.kind),
    references: (spec) => def.references(specOrThrow(spec)),
    networks: (spec) => (def.networks === undefined ? [] : def.networks(specOrThrow(spec))),
    secretValues: (spec) => {
      if (def.secrets === undefined) return [];
      const parsed = rawSpecSchema().safeParse(spec, PARSE_OPTIONS);
      if (!parsed.success) {
        // A spec stored before a rule tightened may still be on the CNF: its plain keys count.
        const raw = (typeof spec === "object" && spec !== null ? spec : {}) as Record<
          string,
          unknown
        >;
        return Object.values(def.secretRefFields ?? {}).flatMap((field) => {
          const value = raw[field];
          return typeof value === "string" && value !== "" ? [value] : [];
        });
      }
      return def.secrets(parsed.data).filter((v): v is string => v !== undefined && v !== "");
    },
    secretRefs: (spec) => {
      // Most kinds have none: no parse for them (a resync asks this of every rule).
      if (def.secretRefFields === undefined) return [];
      const parsed = rawSpecSchema().safeParse(spec, PARSE_OPTIONS);
      if (!parsed.success) return [];
      const data = parsed.data as Readonly<Record<string, unknown>>;
      return Object.entries(def.secretRefFields ?? {}).flatMap(([refField, field]) => {
        const ref = data[refField] as { name: string; key: string } | undefined;
        return ref === undefined ? [] : [{ field, refField, name: ref.name, key: ref.key }];
      });
    },
    uniqueNameScope: def.cnfUniqueNames === undefined ? null : def.cnf.module,
    cnfUniqueNames: (spec) => {
      if (def.cnfUniqueNames === undefined) return [];
      const parsed = rawSpecSchema().safeParse(spec, PARSE_OPTIONS);
      return parsed.success ? [...def.cnfUniqueNames(parsed.data)] : [];
    },
    plainSecretFields: (spec) => {
      if (def.secretRefFields === undefined) return [];
      const parsed = rawSpecSchema().safeParse(spec, PARSE_OPTIONS);
      if (!parsed.success) return [];
      const data = parsed.data as Readonly<Record<string, unknown>>;
      return Object.entries(def.secretRefFields ?? {})
        .filter(([, field]) => typeof data[field] === "string" && data[field] !== "")
        .map(([refField, field]) => ({ field, refField }));
    },
    cnfObjectName: (name) => cnfObjectName(def.nameRule, name),
    toCnf: (cr, ctx) =>
      def.toCnf(cnfObjectName(def.nameRule, cr.metadata.name), specOrThrow(cr.spec), ctx),
    ownsCnfObject: def.ownsCnfObject ?? (() => true),
    normaliseCnf: (obj) => normaliseCnfObject(shape, obj),
    cnfEqual: (desired, actual) => diffCnfObjects(shape, desired, actual).length === 0,
    cnfDiff: (desired, actual) => diffCnfObjects(shape, desired, actual),
  };
}
