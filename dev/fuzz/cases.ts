/**
 * Generators of malformed requests: each returns one request that every function must refuse
 * with a 4xx before any Kubernetes API call (the fuzz server's API is unreachable, so an input
 * that got through intake would answer 503 and fail the run). Only malformed inputs: an empty
 * batch or a ref the function handles would legitimately reach the API.
 */
import { RULE_KIND_NAMES } from "../../shared/kinds/index.js";
import type { Prng } from "./prng.js";

export interface FuzzCase {
  readonly fn: string;
  /** The generator that made it, for the summary and for replaying. */
  readonly label: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** Send with Transfer-Encoding: chunked instead of Content-Length. */
  readonly chunked: boolean;
  /** The statuses that are right for this input (all 4xx). */
  readonly expect: readonly number[];
}

/**
 * Status recorded when node's HTTP parser answers 431 and closes while the client is still
 * writing 100 KB of headers: the client may see the reset before the reply. Allowed only for
 * huge-header inputs; the health check after them proves the server stayed up.
 */
export const RESET = 0;

/** Every status a malformed input may get: refused (400), too large (413), wrong media type (415), headers too large (431, node's own limit). */
export const ALLOWED_STATUSES = [400, 413, 415, 431] as const;

/** The body limit is 1 MiB; 2 MB is well over it. */
const HUGE_BODY_BYTES = 2 * 1000 * 1000;
/** node refuses request headers over 16 KiB in total with 431. */
const HUGE_HEADER_CHARS = 100 * 1000;
/** Under node's header limit, so the value reaches the parser. */
const LONG_HEADER_CHARS = 6 * 1000;
const DEEP_LEVELS = 10_000;

/** Which objects each event function handles: everything else is refused as malformed. */
interface EventTarget {
  readonly name: string;
  readonly kinds: readonly string[];
  /** Handled kinds for which an empty namespace is malformed. */
  readonly namespacedKinds: readonly string[];
  /** Whether a wrong apiVersion on a handled kind is refused (reconcile-rule goes by kind only). */
  readonly checksApiVersion: boolean;
}

export const EVENT_TARGETS: readonly EventTarget[] = [
  {
    name: "reconcile-rule",
    kinds: RULE_KIND_NAMES,
    namespacedKinds: RULE_KIND_NAMES,
    checksApiVersion: false,
  },
  {
    name: "on-deployment-ready",
    kinds: ["Deployment", "Pod"],
    namespacedKinds: ["Deployment", "Pod"],
    checksApiVersion: true,
  },
  {
    name: "egress-group-sync",
    kinds: ["Egress", "Pod", "Namespace"],
    namespacedKinds: ["Pod"],
    checksApiVersion: true,
  },
];

export const ADMISSION_FUNCTION = "validate-admission";

const ALL_KINDS = [...RULE_KIND_NAMES, "Deployment", "Pod", "Egress", "Namespace"];
const UNKNOWN_TYPES = [
  "dev.knative.apiserver.ref.patch",
  "dev.knative.apiserver.resource.add.extra",
  "dev.knative.apiserver.Ref.add",
  "DEV.KNATIVE.APISERVER.REF.ADD",
  " dev.knative.apiserver.ref.add",
  "dev.knative.apiserver.ref.add ",
  "dev.knative.apiserver.ref.",
  "dev.knative.sources.ping.v2",
  "org.sdewan.resync.extra",
  "com.example.someevent",
  "\u00fcnicode.type",
];
const WRONG_EVENT_CONTENT_TYPES = [
  "text/plain",
  "application/xml",
  "application/octet-stream",
  "multipart/form-data; boundary=x",
  "application/x-www-form-urlencoded",
  "text/json",
  "application/jsonx",
];
const WRONG_CHARSETS = ["latin1", "utf-16", "iso-8859-1", "utf-32le", '"shift_jis"'];
const JSON_TYPE = "application/json";
const STRUCTURED_TYPE = "application/cloudevents+json";
const BATCH_TYPE = "application/cloudevents-batch+json";
const REF_TYPES = ["add", "update", "delete"].map((a) => `dev.knative.apiserver.ref.${a}`);
const RESOURCE_TYPES = ["add", "update", "delete"].map(
  (a) => `dev.knative.apiserver.resource.${a}`,
);
/** Bytes that are never valid UTF-8 (lone continuation, overlong, truncated sequences). */
const INVALID_UTF8 = [
  [0xff],
  [0xfe, 0xff],
  [0xc3],
  [0x80],
  [0xc0, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90],
];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** No Content-Type header at all when `type` is undefined. */
const contentType = (type: string | undefined): Record<string, string> =>
  type === undefined ? {} : { "content-type": type };

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const deepArray = (levels: number): string => "[".repeat(levels) + "]".repeat(levels);
const deepObject = (levels: number): string => '{"a":'.repeat(levels) + "1" + "}".repeat(levels);

// ---- refs the function refuses ----------------------------------------------------------------

interface RefFields {
  apiVersion?: Json;
  kind?: Json;
  namespace?: Json;
  name?: Json;
}

function absurdKind(rng: Prng, target: EventTarget): string {
  const candidates = [
    ...ALL_KINDS.filter((kind) => !target.kinds.includes(kind)),
    ...target.kinds.map((kind) => kind.toLowerCase()),
    ...target.kinds.map((kind) => `${kind}s`),
    `Fuzz${rng.ascii(rng.int(1, 40))}`,
    "x".repeat(rng.int(1000, 20_000)),
    "K\u00f6nd\u{1F600}",
    "\uFFFD\uFFFD",
    "\ud800Pod",
    "Pod\udfff",

    " Pod",
    "Pod\n",
  ];
  return rng.pick(candidates);
}

const someName = (rng: Prng): string => `fuzz-${rng.int(0, 99_999)}`;

/** A ref the target refuses: unknown kind, a namespaced kind without namespace, or a wrong apiVersion. */
/** Names every plain object inherits: a lookup table indexed by kind must not find them. */
export const PROTOTYPE_KINDS = [
  "constructor",
  "toString",
  "__proto__",
  "hasOwnProperty",
  "valueOf",
];

function refusedRef(rng: Prng, target: EventTarget): { label: string; fields: RefFields } {
  if (rng.chance(0.1)) {
    return {
      label: "ref-prototype-kind",
      fields: { kind: rng.pick(PROTOTYPE_KINDS), namespace: "default", name: someName(rng) },
    };
  }
  const choice = rng.int(0, target.checksApiVersion ? 2 : 1);
  if (choice === 0) {
    return {
      label: "ref-unknown-kind",
      fields: { kind: absurdKind(rng, target), namespace: "default", name: someName(rng) },
    };
  }
  if (choice === 1) {
    return {
      label: "ref-no-namespace",
      fields: { kind: rng.pick(target.namespacedKinds), namespace: "", name: someName(rng) },
    };
  }
  return {
    label: "ref-wrong-apiversion",
    fields: {
      apiVersion: rng.pick(["v2", "apps/v0", "fuzz.example/v1", "x".repeat(500), "/"]),
      kind: rng.pick(target.kinds),
      namespace: "default",
      name: someName(rng),
    },
  };
}

/** A ref intake itself refuses: kind or name missing, or a field of the wrong JSON type. */
function brokenRef(rng: Prng, target: EventTarget): { label: string; fields: RefFields } {
  const kind = rng.pick(target.kinds);
  const variants: { label: string; fields: RefFields }[] = [
    { label: "ref-missing-kind", fields: { namespace: "default", name: someName(rng) } },
    { label: "ref-missing-name", fields: { kind, namespace: "default" } },
    { label: "ref-empty-fields", fields: { kind: "", namespace: "", name: "" } },
    {
      label: "ref-wrong-types",
      fields: {
        kind: rng.pick<Json>([5, true, [kind], { kind }, null]),
        namespace: "default",
        name: someName(rng),
      },
    },
    {
      label: "ref-wrong-types",
      fields: { kind, namespace: rng.pick<Json>([1, [], {}, false]), name: someName(rng) },
    },
    {
      label: "ref-wrong-types",
      fields: { kind, namespace: "default", name: rng.pick<Json>([0, ["a"], { n: 1 }]) },
    },
  ];
  return rng.pick(variants);
}

/** Reference-mode data or a Resource-mode object for the fields. */
function dataFor(fields: RefFields, mode: "ref" | "resource"): Record<string, Json> {
  const defined = (entries: [string, Json | undefined][]): Record<string, Json> =>
    Object.fromEntries(entries.filter((entry): entry is [string, Json] => entry[1] !== undefined));
  if (mode === "ref") {
    return defined([
      ["apiVersion", fields.apiVersion],
      ["kind", fields.kind],
      ["namespace", fields.namespace],
      ["name", fields.name],
    ]);
  }
  return defined([
    ["apiVersion", fields.apiVersion],
    ["kind", fields.kind],
    [
      "metadata",
      defined([
        ["namespace", fields.namespace],
        ["name", fields.name],
      ]),
    ],
    ["spec", { fuzz: true }],
  ]);
}

// ---- envelopes --------------------------------------------------------------------------------

interface Delivery {
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

function binaryHeaders(rng: Prng, type: string | undefined): Record<string, string> {
  return {
    "ce-specversion": "1.0",
    "ce-id": `fuzz-${rng.int(0, 1e9)}`,
    "ce-source": "/fuzz",
    ...(type === undefined ? {} : { "ce-type": type }),
  };
}

function envelope(rng: Prng, type: string | undefined, data: Json): Record<string, Json> {
  return {
    specversion: "1.0",
    id: `fuzz-${rng.int(0, 1e9)}`,
    source: "/fuzz",
    ...(type === undefined ? {} : { type }),
    datacontenttype: JSON_TYPE,
    data,
  };
}

/** The ref delivered in one of the five ways a function accepts. */
function deliverRef(rng: Prng, fields: RefFields): Delivery {
  const mode = rng.pick(["binary-ref", "binary-resource", "structured", "batch", "plain"] as const);
  switch (mode) {
    case "binary-ref":
      return {
        headers: { ...binaryHeaders(rng, rng.pick(REF_TYPES)), "content-type": JSON_TYPE },
        body: json(dataFor(fields, "ref")),
      };
    case "binary-resource":
      return {
        headers: { ...binaryHeaders(rng, rng.pick(RESOURCE_TYPES)), "content-type": JSON_TYPE },
        body: json(dataFor(fields, "resource")),
      };
    case "structured":
      return {
        headers: { "content-type": STRUCTURED_TYPE },
        body: json(envelope(rng, rng.pick(REF_TYPES), dataFor(fields, "ref"))),
      };
    case "batch": {
      // One refused event makes the whole batch malformed; put it anywhere among a few copies.
      const events = Array.from({ length: rng.int(1, 4) }, () =>
        envelope(rng, rng.pick(REF_TYPES), dataFor(fields, "ref")),
      );
      return { headers: { "content-type": BATCH_TYPE }, body: json(events) };
    }
    case "plain":
      return { headers: { "content-type": JSON_TYPE }, body: json(dataFor(fields, "ref")) };
  }
}

// ---- event generators -------------------------------------------------------------------------

type EventGenerator = (rng: Prng, target: EventTarget) => Omit<FuzzCase, "fn" | "chunked">;

const refused: EventGenerator = (rng, target) => {
  const { label, fields } = refusedRef(rng, target);
  return { label, ...deliverRef(rng, fields), expect: [400] };
};

const broken: EventGenerator = (rng, target) => {
  const { label, fields } = brokenRef(rng, target);
  return { label, ...deliverRef(rng, fields), expect: [400] };
};

const missingType: EventGenerator = (rng, target) => {
  const data = dataFor({ kind: rng.pick(target.kinds), namespace: "default", name: "x" }, "ref");
  if (rng.chance(0.5)) {
    return {
      label: "missing-type",
      headers: { ...binaryHeaders(rng, undefined), "content-type": JSON_TYPE },
      body: json(data),
      expect: [400],
    };
  }
  return {
    label: "missing-type",
    headers: { "content-type": STRUCTURED_TYPE },
    body: json(envelope(rng, undefined, data)),
    expect: [400],
  };
};

const unknownType: EventGenerator = (rng, target) => {
  const type = rng.pick([...UNKNOWN_TYPES, `fuzz.${rng.ascii(rng.int(1, 60))}`]);
  const data = dataFor({ kind: rng.pick(target.kinds), namespace: "default", name: "x" }, "ref");
  const structured = rng.chance(0.5);
  return {
    label: "unknown-type",
    headers: structured
      ? { "content-type": STRUCTURED_TYPE }
      : // The binding percent-encodes header values; the parser decodes them.
        { ...binaryHeaders(rng, encodeURIComponent(type)), "content-type": JSON_TYPE },
    body: json(structured ? envelope(rng, type, data) : data),
    expect: [400],
  };
};

const truncated: EventGenerator = (rng, target) => {
  const whole = deliverRef(rng, refusedRef(rng, target).fields);
  // Any proper prefix of a JSON object or array is invalid JSON.
  const cut = rng.int(1, whole.body.length - 1);
  return {
    label: "truncated-json",
    headers: whole.headers,
    body: whole.body.subarray(0, cut),
    expect: [400],
  };
};

const wrongContentType: EventGenerator = (rng, target) => {
  const data = json(
    dataFor({ kind: rng.pick(target.kinds), namespace: "default", name: "x" }, "ref"),
  );
  const variant = rng.int(0, 3);
  if (variant === 0) {
    return {
      label: "wrong-content-type",
      headers: {
        ...binaryHeaders(rng, rng.pick(REF_TYPES)),
        "content-type": rng.pick(WRONG_EVENT_CONTENT_TYPES),
      },
      body: data,
      expect: [415],
    };
  }
  if (variant === 1) {
    // A plain ref must say it is JSON.
    const type = rng.pick([...WRONG_EVENT_CONTENT_TYPES, undefined]);
    return {
      label: "wrong-content-type",
      headers: contentType(type),
      body: data,
      expect: [415],
    };
  }
  if (variant === 2) {
    return {
      label: "wrong-content-type",
      headers: {
        "content-type": rng.pick([
          "application/cloudevents+xml",
          "application/cloudevents",
          "application/cloudevents-batch+xml",
          "application/cloudevents-batch",
          "application/cloudevents+json+x",
        ]),
      },
      body: json(envelope(rng, rng.pick(REF_TYPES), {})),
      expect: [415],
    };
  }
  return {
    label: "wrong-charset",
    headers: {
      "content-type": `${rng.pick([JSON_TYPE, STRUCTURED_TYPE, BATCH_TYPE])}; charset=${rng.pick(WRONG_CHARSETS)}`,
    },
    body: data,
    expect: [415],
  };
};

const hugeBody: EventGenerator = (rng) => {
  const filler = "a".repeat(HUGE_BODY_BYTES);
  const variant = rng.pick(["binary", "structured", "plain"] as const);
  const body =
    variant === "structured"
      ? json(envelope(rng, rng.pick(REF_TYPES), { kind: filler }))
      : json({ kind: "Pod", namespace: "default", name: filler });
  const headers =
    variant === "binary"
      ? { ...binaryHeaders(rng, rng.pick(REF_TYPES)), "content-type": JSON_TYPE }
      : { "content-type": variant === "structured" ? STRUCTURED_TYPE : JSON_TYPE };
  return { label: "huge-body", headers, body, expect: [413] };
};

const hugeHeader: EventGenerator = (rng, target) => {
  const name = rng.pick(["ce-type", "ce-name", "ce-kind", "ce-fuzz", "x-fuzz"]);
  return {
    label: "huge-header",
    headers: {
      ...binaryHeaders(rng, rng.pick(REF_TYPES)),
      "content-type": JSON_TYPE,
      [name]: "h".repeat(HUGE_HEADER_CHARS),
    },
    body: json({ kind: rng.pick(target.kinds), namespace: "default", name: "x" }),
    expect: [431, RESET],
  };
};

const longHeader: EventGenerator = (rng) => {
  // Long values that reach the parser: a long unknown type, or a long kind the function refuses.
  const long = "k".repeat(LONG_HEADER_CHARS);
  const asType = rng.chance(0.5);
  return {
    label: "long-header-value",
    headers: asType
      ? { ...binaryHeaders(rng, `fuzz.${long}`) }
      : {
          ...binaryHeaders(rng, rng.pick(REF_TYPES)),
          "ce-kind": `Fuzz${long}`,
          "ce-namespace": "default",
          "ce-name": long,
        },
    body: Buffer.alloc(0),
    expect: [400],
  };
};

const deepNesting: EventGenerator = (rng, target) => {
  const nested = rng.chance(0.5) ? deepArray(DEEP_LEVELS) : deepObject(DEEP_LEVELS);
  const variant = rng.int(0, 4);
  const type = rng.pick(REF_TYPES);
  const ceHeaders = { ...binaryHeaders(rng, type), "content-type": JSON_TYPE };
  switch (variant) {
    case 0: // the whole binary body
      return {
        label: "deep-nesting",
        headers: ceHeaders,
        body: Buffer.from(deepArray(DEEP_LEVELS)),
        expect: [400],
      };
    case 1: // a ref field
      return {
        label: "deep-nesting",
        headers: ceHeaders,
        body: Buffer.from(`{"kind":${nested},"namespace":"default","name":"x"}`),
        expect: [400],
      };
    case 2: // structured data next to a refused kind
      return {
        label: "deep-nesting",
        headers: { "content-type": STRUCTURED_TYPE },
        body: Buffer.from(
          `{"specversion":"1.0","id":"1","source":"/f","type":"${type}","data":{"kind":${JSON.stringify(absurdKind(rng, target))},"name":"x","namespace":"default","extra":${nested}}}`,
        ),
        expect: [400],
      };
    case 3: // a batch of deeply nested elements
      return {
        label: "deep-nesting",
        headers: { "content-type": BATCH_TYPE },
        body: Buffer.from(`[${deepArray(DEEP_LEVELS)}]`),
        expect: [400],
      };
    default: // resync data (strict schema)
      return {
        label: "deep-nesting",
        headers: { "content-type": STRUCTURED_TYPE },
        body: Buffer.from(
          `{"specversion":"1.0","id":"1","source":"/f","type":"org.sdewan.resync","data":{"namespace":${nested}}}`,
        ),
        expect: [400],
      };
  }
};

const invalidUtf8: EventGenerator = (rng, target) => {
  const bad = Buffer.from(rng.pick(INVALID_UTF8));
  if (rng.chance(0.5)) {
    // Inside a string: decoded as U+FFFD, so the kind is one no function handles.
    const kind = Buffer.from(rng.pick(target.kinds));
    const body = Buffer.concat([
      Buffer.from('{"kind":"'),
      kind.subarray(0, rng.int(0, kind.length - 1)),
      bad,
      Buffer.from('","namespace":"default","name":"x"}'),
    ]);
    return {
      label: "invalid-utf8",
      headers: { ...binaryHeaders(rng, rng.pick(REF_TYPES)), "content-type": JSON_TYPE },
      body,
      expect: [400],
    };
  }
  // Where JSON syntax is expected.
  const whole = deliverRef(rng, refusedRef(rng, target).fields);
  const at = rng.int(0, whole.body.length);
  return {
    label: "invalid-utf8",
    headers: whole.headers,
    body: Buffer.concat([
      whole.body.subarray(0, at),
      bad,
      Buffer.from("\u0000"),
      whole.body.subarray(at),
    ]),
    expect: [400],
  };
};

const badEnvelope: EventGenerator = (rng) => {
  const type = rng.pick(REF_TYPES);
  const variants: [string, string, Buffer][] = [
    [
      "structured-not-object",
      STRUCTURED_TYPE,
      json(rng.pick<Json>([[], [1], "event", 42, null, true])),
    ],
    [
      "structured-bad-specversion",
      STRUCTURED_TYPE,
      json({ ...envelope(rng, type, {}), specversion: rng.pick<Json>(["9.9", 1, "", null]) }),
    ],
    [
      "structured-no-source",
      STRUCTURED_TYPE,
      json((({ source: _s, ...rest }) => rest)(envelope(rng, type, {}))),
    ],
    [
      "structured-bad-base64",
      STRUCTURED_TYPE,
      json({
        ...(({ data: _d, ...rest }) => rest)(envelope(rng, type, {})),
        data_base64: Buffer.from(rng.ascii(20)).toString("base64"),
      }),
    ],
    [
      "batch-not-array",
      BATCH_TYPE,
      json(rng.pick<Json>([{}, envelope(rng, type, {}), "[]", 0, null])),
    ],
    [
      "batch-bad-element",
      BATCH_TYPE,
      json([envelope(rng, "org.sdewan.resync", {}), rng.pick<Json>([null, 1, "e", []])]),
    ],
    [
      "empty-body",
      rng.pick([JSON_TYPE, STRUCTURED_TYPE, BATCH_TYPE]),
      Buffer.from(rng.pick(["", " ", "\n\t"])),
    ],
    ["plain-not-object", JSON_TYPE, json(rng.pick<Json>([[], "Pod", 1, null]))],
    [
      "plain-bad-action",
      JSON_TYPE,
      json({ kind: "Pod", namespace: "d", name: "x", action: rng.pick<Json>(["patch", "", 1]) }),
    ],
  ];
  const [label, contentType, body] = rng.pick(variants);
  return { label, headers: { "content-type": contentType }, body, expect: [400] };
};

const badResync: EventGenerator = (rng) => {
  const data = rng.pick<Json>([
    { namespace: 5 },
    { namespace: "" },
    { purpose: "x" },
    { namespace: "ns", fuzz: 1 },
    [],
    "all",
    { namespace: "ns", purpose: ["x"] },
  ]);
  const type = rng.pick(["org.sdewan.resync", "dev.knative.sources.ping"]);
  if (rng.chance(0.5)) {
    return {
      label: "bad-resync-data",
      headers: { "content-type": STRUCTURED_TYPE },
      body: json(envelope(rng, type, data)),
      expect: [400],
    };
  }
  return {
    label: "bad-resync-data",
    headers: { ...binaryHeaders(rng, type), "content-type": JSON_TYPE },
    body: json(data),
    expect: [400],
  };
};

const badEncoding: EventGenerator = (rng) => {
  const gzip = rng.chance(0.5);
  return {
    label: "bad-content-encoding",
    headers: {
      "content-type": JSON_TYPE,
      "content-encoding": gzip ? "gzip" : rng.pick(["x-fuzz", "compress"]),
    },
    body: Buffer.from(rng.ascii(rng.int(1, 200))),
    // Corrupt gzip cannot be read (400); an encoding nobody knows is an unsupported media type.
    expect: gzip ? [400] : [415],
  };
};

/** Weighted: the ref cases dominate, the expensive ones (2 MB, 10,000 levels) are rarer. */
const EVENT_GENERATORS: readonly [EventGenerator, number][] = [
  [refused, 20],
  [broken, 15],
  [missingType, 6],
  [unknownType, 8],
  [truncated, 8],
  [wrongContentType, 8],
  [hugeBody, 2],
  [hugeHeader, 3],
  [longHeader, 3],
  [deepNesting, 3],
  [invalidUtf8, 6],
  [badEnvelope, 10],
  [badResync, 5],
  [badEncoding, 3],
];

function pickWeighted<T>(rng: Prng, items: readonly [T, number][]): T {
  const total = items.reduce((sum, [, weight]) => sum + weight, 0);
  let roll = rng.next() * total;
  for (const [item, weight] of items) {
    roll -= weight;
    if (roll < 0) return item;
  }
  return (items[items.length - 1] as [T, number])[0];
}

function finish(rng: Prng, fn: string, partial: Omit<FuzzCase, "fn" | "chunked">): FuzzCase {
  // Sometimes ask for the JSON reply body, sometimes stream the body without a length.
  const verbose: Record<string, string> = rng.chance(0.3) ? { "x-sdewan-verbose": "1" } : {};
  return { fn, ...partial, headers: { ...partial.headers, ...verbose }, chunked: rng.chance(0.2) };
}

export function eventCase(rng: Prng, target: EventTarget): FuzzCase {
  return finish(rng, target.name, pickWeighted(rng, EVENT_GENERATORS)(rng, target));
}

export {
  contentType,
  pickWeighted,
  finish,
  json,
  deepArray,
  deepObject,
  HUGE_BODY_BYTES,
  HUGE_HEADER_CHARS,
  DEEP_LEVELS,
  INVALID_UTF8,
};
export type { Json };
