/**
 * Reads a request body with node:http alone, as express.raw() did before it (express, its body
 * parser and their dependencies were ~5 MiB of a function process's memory at idle): decoded per
 * Content-Encoding (gzip, deflate, br or none), capped at a limit counted on the decoded bytes.
 * Every failure is an IntakeError the runtime answers like any other unusable request.
 */
import type { IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import { IntakeError } from "../events/errors.js";

const zlib = process.getBuiltinModule("node:zlib");

const DECODERS: Readonly<Record<string, (() => Readable & NodeJS.WritableStream) | undefined>> = {
  identity: undefined,
  gzip: () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

const tooLarge = (limit: number): IntakeError =>
  new IntakeError("body-too-large", `body is larger than the limit of ${limit} bytes`);

/** zlib's errors may come from another realm (a test's VM context): read the message, not the class. */
const errorMessage = (error: unknown): string => {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === "string" ? message : String(error);
};

/**
 * The body, or undefined when the request has none (neither Content-Length nor
 * Transfer-Encoding). A declared Content-Length over the limit is refused before any byte is
 * read. On a failure the rest of the body is read and dropped, so the reply can still be sent.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const declared = req.headers["content-length"];
  const hasBody = req.headers["transfer-encoding"] !== undefined || declared !== undefined;
  if (!hasBody) return undefined;
  const encoding = (req.headers["content-encoding"] ?? "identity").trim().toLowerCase();
  if (!Object.hasOwn(DECODERS, encoding)) {
    req.resume();
    throw new IntakeError(
      "unsupported-content-type",
      `unsupported content encoding "${encoding}": send gzip, deflate, br or none`,
    );
  }
  const decoder = DECODERS[encoding];
  if (decoder === undefined && declared !== undefined && Number(declared) > limit) {
    req.resume();
    throw tooLarge(limit);
  }
  const source: Readable = decoder === undefined ? req : req.pipe(decoder());
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (error: IntakeError): void => {
      source.off("data", onData);
      if (source !== req) {
        req.unpipe();
        source.destroy();
      }
      // Read on to the end (not destroy): the socket must stay open for the reply.
      req.resume();
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) fail(tooLarge(limit));
      else chunks.push(chunk);
    };
    source.on("data", onData);
    source.once("end", () => resolve(Buffer.concat(chunks, size)));
    source.once("error", (error) =>
      fail(
        new IntakeError("bad-event", `could not read the body: ${errorMessage(error)}`, {
          cause: error,
        }),
      ),
    );
    if (source !== req) req.once("error", (error) => source.destroy(error));
    req.once("close", () => {
      if (!req.complete) fail(new IntakeError("bad-event", "could not read the body: aborted"));
    });
  });
}
