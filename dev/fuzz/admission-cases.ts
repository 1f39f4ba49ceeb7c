/**
 * Malformed AdmissionReviews for validate-admission: each breaks the AdmissionReview v1 schema (or
 * the HTTP framing), so the function answers 400/413/415/431 without reading anything.
 */
import {
  DEEP_LEVELS,
  HUGE_HEADER_CHARS,
  INVALID_UTF8,
  RESET,
  contentType,
  deepArray,
  deepObject,
  finish,
  json,
  pickWeighted,
  type FuzzCase,
  type Json,
} from "./cases.js";
import type { Prng } from "./prng.js";

const FN = "validate-admission";
/** Over validate-admission's 3 MiB body limit (the API server's own request limit). */
const ADMISSION_HUGE_BODY_BYTES = 4 * 1000 * 1000;
const JSON_TYPE = "application/json";

type Review = { [key: string]: Json };

/** A review the API server could send; every generator below breaks it. */
function validReview(rng: Prng): Review {
  const name = `fuzz-${rng.int(0, 99_999)}`;
  const gvk = { group: "batch.sdewan.akraino.org", version: "v1alpha1", kind: "Mwan3Rule" };
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: `uid-${rng.int(0, 1e9)}`,
      kind: gvk,
      resource: { group: gvk.group, version: gvk.version, resource: "mwan3rules" },
      name,
      namespace: "default",
      operation: "CREATE",
      userInfo: { username: "fuzz", groups: ["system:authenticated"] },
      object: {
        apiVersion: `${gvk.group}/${gvk.version}`,
        kind: gvk.kind,
        metadata: { name, namespace: "default", labels: { sdewanPurpose: "cnf1" } },
        spec: { policy: "p", src_ip: "10.0.0.1" },
      },
    },
  };
}

const requestOf = (review: Review): Review => review["request"] as Review;
const objectOf = (review: Review): Review => requestOf(review)["object"] as Review;

/** Each breaks the schema in one way; returns its label. */
const SCHEMA_BREAKERS: readonly ((rng: Prng, review: Review) => string)[] = [
  (rng, r) => {
    r["apiVersion"] = rng.pick<Json>(["admission.k8s.io/v1beta1", "v1", "", 1, null]);
    return "wrong-apiversion";
  },
  (rng, r) => {
    if (rng.chance(0.3)) delete r["apiVersion"];
    else r["kind"] = rng.pick<Json>(["AdmissionRequest", "admissionreview", "", 7]);
    return "wrong-kind";
  },
  (rng, r) => {
    if (rng.chance(0.5)) delete requestOf(r)["uid"];
    else requestOf(r)["uid"] = rng.pick<Json>(["", 12, null, ["u"]]);
    return "missing-uid";
  },
  (rng, r) => {
    requestOf(r)["operation"] = rng.pick<Json>([
      "PATCH",
      "create",
      "Create",
      "",
      1,
      null,
      "DELETE ",
    ]);
    return "wrong-operation";
  },
  (rng, r) => {
    const op = rng.pick(["CREATE", "UPDATE", "DELETE"]);
    requestOf(r)["operation"] = op;
    if (op === "CREATE") delete requestOf(r)["object"];
    else delete requestOf(r)["oldObject"];
    return "operation-without-object";
  },
  (rng, r) => {
    requestOf(r)["object"] = rng.pick<Json>([[], "object", 42, true, {}, { metadata: [] }]);
    return "object-wrong-shape";
  },
  (rng, r) => {
    const metadata = objectOf(r)["metadata"] as Review;
    const field = rng.pick(["labels", "annotations", "name", "namespace"]);
    metadata[field] =
      field === "labels" || field === "annotations"
        ? rng.pick<Json>([{ a: 1 }, ["x"], "a=b", { b: null }])
        : rng.pick<Json>([5, { n: 1 }, []]);
    return "object-wrong-metadata";
  },
  (rng, r) => {
    // userInfo fields all have defaults, so only a non-object breaks it.
    const field = rng.pick(["kind", "resource", "userInfo"]);
    const broken: Json[] = field === "userInfo" ? [null, "x", []] : [null, "x", [], { group: 1 }];
    requestOf(r)[field] = rng.pick(broken);
    return "request-field-wrong-shape";
  },
  (rng, r) => {
    r["request"] = rng.pick<Json>([null, [], "request", 0]);
    return "request-wrong-shape";
  },
  (rng, r) => {
    requestOf(r)["userInfo"] = { username: "fuzz", groups: rng.pick<Json>(["g", [1], [null]]) };
    return "userinfo-wrong-shape";
  },
];

type AdmissionGenerator = (rng: Prng) => Omit<FuzzCase, "fn" | "chunked">;

const jsonHeaders = { "content-type": JSON_TYPE };

function brokenReview(rng: Prng): { label: string; review: Review } {
  const review = validReview(rng);
  const label = rng.pick(SCHEMA_BREAKERS)(rng, review);
  return { label, review };
}

const schemaBroken: AdmissionGenerator = (rng) => {
  const { label, review } = brokenReview(rng);
  return { label, headers: jsonHeaders, body: json(review), expect: [400] };
};

const notAReview: AdmissionGenerator = (rng) => ({
  label: "not-a-review",
  headers: jsonHeaders,
  body: json(
    rng.pick<Json>([null, [], 0, "AdmissionReview", {}, { request: {} }, [validReview(rng)]]),
  ),
  expect: [400],
});

const truncated: AdmissionGenerator = (rng) => {
  const whole = json(validReview(rng));
  return {
    label: "truncated-json",
    headers: jsonHeaders,
    body: whole.subarray(0, rng.int(1, whole.length - 1)),
    expect: [400],
  };
};

const wrongContentType: AdmissionGenerator = (rng) => {
  const type = rng.pick([
    "text/plain",
    "application/xml",
    "application/yaml",
    "application/octet-stream",
    "text/json",
    undefined,
  ]);
  return {
    label: "wrong-content-type",
    headers: contentType(type),
    body: json(validReview(rng)),
    expect: [415],
  };
};

const emptyBody: AdmissionGenerator = (rng) => ({
  label: "empty-body",
  headers: jsonHeaders,
  body: Buffer.from(rng.pick(["", " ", "\r\n"])),
  expect: [400],
});

const hugeBody: AdmissionGenerator = (rng) => {
  const review = validReview(rng);
  // validate-admission takes up to the API server's 3 MiB (ADMISSION_MAX_BODY_BYTES): over it.
  objectOf(review)["spec"] = { blob: "b".repeat(ADMISSION_HUGE_BODY_BYTES) };
  return { label: "huge-body", headers: jsonHeaders, body: json(review), expect: [413] };
};

const largeBroken: AdmissionGenerator = (rng) => {
  // Under the body limit, so it is parsed: large strings where the policies would look.
  const { label, review } = brokenReview(rng);
  const request = requestOf(review);
  if (typeof request === "object" && request !== null && !Array.isArray(request)) {
    request["name"] = "n".repeat(rng.int(100_000, 900_000));
  } else {
    review["padding"] = "p".repeat(rng.int(100_000, 900_000));
  }
  return { label: `large+${label}`, headers: jsonHeaders, body: json(review), expect: [400] };
};

const deepBroken: AdmissionGenerator = (rng) => {
  const { label, review } = brokenReview(rng);
  const marker = "__DEEP__";
  const request = requestOf(review);
  if (typeof request === "object" && request !== null && !Array.isArray(request)) {
    request["deep"] = marker;
  } else {
    review["deep"] = marker;
  }
  const nested = rng.chance(0.5) ? deepArray(DEEP_LEVELS) : deepObject(DEEP_LEVELS);
  const body = JSON.stringify(review).replace(`"${marker}"`, nested);
  return { label: `deep+${label}`, headers: jsonHeaders, body: Buffer.from(body), expect: [400] };
};

const deepObjectSpec: AdmissionGenerator = (rng) => {
  // Deep nesting inside the object itself, with the review broken elsewhere.
  const review = validReview(rng);
  delete requestOf(review)["uid"];
  const body = JSON.stringify(review).replace(
    '{"policy":"p","src_ip":"10.0.0.1"}',
    deepArray(DEEP_LEVELS),
  );
  return {
    label: "deep-spec+missing-uid",
    headers: jsonHeaders,
    body: Buffer.from(body),
    expect: [400],
  };
};

const invalidUtf8: AdmissionGenerator = (rng) => {
  const whole = json(validReview(rng));
  // After a structural character, with a raw NUL: if that spot is inside a string after all
  // ("system:authenticated"), the unescaped control character still makes the JSON invalid.
  const positions = [...whole.keys()].filter((i) =>
    "{[,:".includes(String.fromCharCode(whole[i] ?? 0)),
  );
  const at = rng.pick(positions) + 1;
  return {
    label: "invalid-utf8",
    headers: jsonHeaders,
    body: Buffer.concat([
      whole.subarray(0, at),
      Buffer.from(rng.pick(INVALID_UTF8)),
      Buffer.from([0]),
      whole.subarray(at),
    ]),
    expect: [400],
  };
};

const hugeHeader: AdmissionGenerator = (rng) => ({
  label: "huge-header",
  headers: {
    ...jsonHeaders,
    [rng.pick(["x-fuzz", "authorization", "ce-id"])]: "h".repeat(HUGE_HEADER_CHARS),
  },
  body: json(validReview(rng)),
  expect: [431, RESET],
});

const badEncoding: AdmissionGenerator = (rng) => {
  const gzip = rng.chance(0.5);
  return {
    label: "bad-content-encoding",
    headers: { ...jsonHeaders, "content-encoding": gzip ? "gzip" : "x-fuzz" },
    body: Buffer.from(rng.ascii(rng.int(1, 200))),
    expect: gzip ? [400] : [415],
  };
};

const ADMISSION_GENERATORS: readonly [AdmissionGenerator, number][] = [
  [schemaBroken, 40],
  [notAReview, 8],
  [truncated, 10],
  [wrongContentType, 8],
  [emptyBody, 4],
  [hugeBody, 2],
  [largeBroken, 3],
  [deepBroken, 3],
  [deepObjectSpec, 2],
  [invalidUtf8, 10],
  [hugeHeader, 3],
  [badEncoding, 3],
];

export function admissionCase(rng: Prng): FuzzCase {
  return finish(rng, FN, pickWeighted(rng, ADMISSION_GENERATORS)(rng));
}

export { FN as ADMISSION_FN };
