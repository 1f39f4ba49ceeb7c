import { IntakeError, parseIntake, type RawRequest } from "../../../shared/events/index.js";
import { loadEventFixture } from "../../fixtures/events/index.js";

const refUpdate = loadEventFixture("binary-ref-update");
const structured = loadEventFixture("structured-ref-add");
const withoutHeader = (headers: Record<string, string>, name: string) =>
  Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));

function intakeErrorOf(request: RawRequest, maxBodyBytes?: number): IntakeError {
  try {
    parseIntake(request, maxBodyBytes === undefined ? {} : { maxBodyBytes });
  } catch (error) {
    if (error instanceof IntakeError) return error;
    throw error;
  }
  throw new Error("expected an IntakeError, the request was accepted");
}

const structuredBody = (fields: Record<string, unknown>) =>
  JSON.stringify({ specversion: "1.0", id: "x1", source: "test", ...fields });

interface Case {
  readonly title: string;
  readonly request: RawRequest;
  readonly code: string;
  readonly status: number;
  readonly message: RegExp;
}

const cases: Case[] = [
  {
    title: "binary event with a body that is not JSON",
    request: { headers: refUpdate.headers, body: '{"kind": "Mwan3Rule",' },
    code: "bad-json",
    status: 400,
    message: /^body is not valid JSON: /,
  },
  {
    title: "structured event that is not JSON",
    request: { headers: structured.headers, body: "specversion=1.0" },
    code: "bad-json",
    status: 400,
    message: /^body is not valid JSON/,
  },
  {
    title: "plain ref that is not JSON",
    request: { headers: { "content-type": "application/json" }, body: "{kind: Mwan3Rule}" },
    code: "bad-json",
    status: 400,
    message: /^body is not valid JSON/,
  },
  {
    title: "batch that is not JSON",
    request: { headers: { "content-type": "application/cloudevents-batch+json" }, body: "[{" },
    code: "bad-json",
    status: 400,
    message: /^batch body is not valid JSON/,
  },
  {
    title: "binary event without ce-type",
    request: { headers: withoutHeader(refUpdate.headers, "ce-type"), body: refUpdate.body },
    code: "missing-type",
    status: 400,
    message: /CloudEvent has no type \(ce-type header/,
  },
  {
    title: "structured event without type",
    request: { headers: structured.headers, body: structuredBody({ data: {} }) },
    code: "missing-type",
    status: 400,
    message: /CloudEvent has no type/,
  },
  {
    title: "an event type nobody here handles",
    request: {
      headers: { ...refUpdate.headers, "ce-type": "dev.knative.apiserver.resource.patch" },
      body: refUpdate.body,
    },
    code: "unknown-type",
    status: 400,
    message:
      /^unknown CloudEvent type "dev\.knative\.apiserver\.resource\.patch"; accepted: dev\.knative\.apiserver\.resource\.\{add,update,delete\}.*org\.akraino\.sdewan\.resync, dev\.knative\.sources\.ping$/,
  },
  {
    title: "curl's default form encoding",
    request: {
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: '{"kind":"Pod","name":"p"}',
    },
    code: "unsupported-content-type",
    status: 415,
    message: /^Content-Type "application\/x-www-form-urlencoded": send application\/json/,
  },
  {
    title: "no Content-Type at all on a plain body",
    request: { headers: {}, body: '{"kind":"Pod","name":"p"}' },
    code: "unsupported-content-type",
    status: 415,
    message: /^no Content-Type: send application\/json/,
  },
  {
    title: "binary event with XML data",
    request: {
      headers: { ...refUpdate.headers, "content-type": "application/xml" },
      body: "<ref/>",
    },
    code: "unsupported-content-type",
    status: 415,
    message:
      /^Content-Type "application\/xml" is not supported for event data: send application\/json$/,
  },
  {
    title: "structured mode in a non-JSON format",
    request: { headers: { "content-type": "application/cloudevents+xml" }, body: "<event/>" },
    code: "unsupported-content-type",
    status: 415,
    message:
      /^Content-Type "application\/cloudevents\+xml" is not supported: use application\/cloudevents\+json$/,
  },
  {
    title: "batch mode in a non-JSON format",
    request: {
      headers: { "content-type": "application/cloudevents-batch+xml" },
      body: "<events/>",
    },
    code: "unsupported-content-type",
    status: 415,
    message: /use application\/cloudevents-batch\+json$/,
  },
  {
    title: "JSON in a charset other than UTF-8",
    request: { headers: { "content-type": "application/json; charset=iso-8859-1" }, body: "{}" },
    code: "unsupported-content-type",
    status: 415,
    message: /^charset "iso-8859-1" is not supported/,
  },
  {
    title: "Reference-mode event whose data and extensions give no name",
    request: {
      headers: withoutHeader(refUpdate.headers, "ce-name"),
      body: JSON.stringify({ kind: "Mwan3Rule", namespace: "sdewan-demo" }),
    },
    code: "missing-ref-field",
    status: 400,
    message:
      /^event dev\.knative\.apiserver\.ref\.update names no object: missing "name" \(data\.name or the ce-name extension\)$/,
  },
  {
    title: "Resource-mode event without kind or name",
    request: {
      headers: {
        "content-type": "application/json",
        "ce-id": "1",
        "ce-type": "dev.knative.apiserver.resource.add",
      },
      body: JSON.stringify({ metadata: {} }),
    },
    code: "missing-ref-field",
    status: 400,
    message:
      /missing "kind" \(data\.kind or the ce-kind extension\) and "name" \(data\.metadata\.name or the ce-name extension\)$/,
  },
  {
    title: "plain ref without kind",
    request: {
      headers: { "content-type": "application/json" },
      body: '{"namespace":"ns1","name":"r1"}',
    },
    code: "missing-ref-field",
    status: 400,
    message: /^plain ref is missing "kind" \(kind\)$/,
  },
  {
    title: "a structured event sent as application/json gets a hint",
    request: {
      headers: { "content-type": "application/json" },
      body: loadEventFixture("structured-resource-update").body,
    },
    code: "missing-ref-field",
    status: 400,
    message:
      /looks like a structured CloudEvent: send it with Content-Type: application\/cloudevents\+json\)$/,
  },
  {
    title: "plain ref with an action that is not a watch action",
    request: {
      headers: { "content-type": "application/json" },
      body: '{"kind":"Pod","name":"p","action":"restart"}',
    },
    code: "bad-data",
    status: 400,
    message: /^action: /,
  },
  {
    title: "resync with a misspelt field (it would widen the resync silently)",
    request: {
      headers: { ...refUpdate.headers, "ce-type": "org.akraino.sdewan.resync" },
      body: '{"namepsace":"ns1"}',
    },
    code: "bad-data",
    status: 400,
    message: /^data: Unrecognized key: "namepsace"/,
  },
  {
    title: "resync with a purpose but no namespace",
    request: {
      headers: { ...refUpdate.headers, "ce-type": "org.akraino.sdewan.resync" },
      body: '{"purpose":"base"}',
    },
    code: "bad-data",
    status: 400,
    message: /^data\.purpose: purpose is only meaningful with a namespace$/,
  },
  {
    title: "binary event whose data is an array",
    request: { headers: refUpdate.headers, body: "[1,2]" },
    code: "bad-data",
    status: 400,
    message: /^event data must be a JSON object$/,
  },
  {
    title: "batch that is an object, not an array",
    request: {
      headers: { "content-type": "application/cloudevents-batch+json" },
      body: structured.body,
    },
    code: "bad-event",
    status: 400,
    message: /^batch body must be a JSON array of CloudEvents$/,
  },
  {
    title: "batch whose second element has no type: the message names the element",
    request: {
      headers: { "content-type": "application/cloudevents-batch+json" },
      body: `[${structured.body}, ${structuredBody({ data: {} })}]`,
    },
    code: "missing-type",
    status: 400,
    message: /^batch\[1\]: CloudEvent has no type/,
  },
  {
    title: "structured event with a non-string name extension",
    request: {
      headers: structured.headers,
      body: structuredBody({ type: "dev.knative.apiserver.ref.add", name: 7 }),
    },
    code: "bad-event",
    status: 400,
    message: /^name: /,
  },
  {
    title: "an empty plain body",
    request: { headers: { "content-type": "application/json" }, body: "" },
    code: "empty-body",
    status: 400,
    message: /^body is empty: post a CloudEvent or a JSON ref/,
  },
  {
    title: "an empty structured body",
    request: { headers: structured.headers, body: " " },
    code: "empty-body",
    status: 400,
    message: /^body is empty$/,
  },
];

describe("malformed requests are refused with a stable code and a precise message", () => {
  it.each(cases)("$title -> $status $code", ({ request, code, status, message }) => {
    const error = intakeErrorOf(request);
    expect({ code: error.code, status: error.httpStatus }).toEqual({ code, status });
    expect(error.message).toMatch(message);
  });

  it("a body over the limit -> 413 naming its size and the limit", () => {
    const error = intakeErrorOf(refUpdate, 64);
    expect(error.code).toBe("body-too-large");
    expect(error.httpStatus).toBe(413);
    expect(error.message).toBe(
      `body is ${Buffer.byteLength(refUpdate.body)} bytes; the limit is 64 bytes`,
    );
  });
});
