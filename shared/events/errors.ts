/**
 * Why an HTTP request could not be turned into events. Each code has one HTTP status; the
 * runtime answers with it and never hands the request to a function.
 */

export const INTAKE_ERROR_STATUS = {
  /** The body is larger than the configured limit. */
  "body-too-large": 413,
  /** Content-Type is neither JSON nor a CloudEvents JSON format. */
  "unsupported-content-type": 415,
  /** The body is not valid JSON. */
  "bad-json": 400,
  /** No body where one is needed. */
  "empty-body": 400,
  /** A CloudEvent without a `type` attribute. */
  "missing-type": 400,
  /** A CloudEvent whose type no function here understands. */
  "unknown-type": 400,
  /** The event names no object: `kind` or `name` is missing. */
  "missing-ref-field": 400,
  /** The event's data has the wrong shape for its type. */
  "bad-data": 400,
  /** The CloudEvent envelope itself is unusable (not an object, bad batch). */
  "bad-event": 400,
} as const;

export type IntakeErrorCode = keyof typeof INTAKE_ERROR_STATUS;
export type IntakeErrorStatus = (typeof INTAKE_ERROR_STATUS)[IntakeErrorCode];

/** A request that cannot become events; `code` is stable, `message` says precisely what is wrong. */
export class IntakeError extends Error {
  override readonly name = "IntakeError";
  readonly httpStatus: IntakeErrorStatus;

  constructor(
    readonly code: IntakeErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.httpStatus = INTAKE_ERROR_STATUS[code];
  }
}

export const isIntakeError = (error: unknown): error is IntakeError => error instanceof IntakeError;
