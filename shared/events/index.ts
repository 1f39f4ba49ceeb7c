/**
 * Event intake: turns one HTTP request into IntakeEvent[] (which objects to look at, or which
 * scope to resync). Accepts CloudEvents in binary, structured and batch mode (ApiServerSource
 * Resource and Reference mode, our resync type, PingSource) and a plain JSON ref for curl users.
 * It does not decide what to do, touch the API server, or know HTTP frameworks.
 *
 * Example:
 *   parseIntake({ headers: { "content-type": "application/json" },
 *                 body: '{"kind":"Mwan3Rule","namespace":"ns1","name":"r1"}' })
 *   // -> [{ type: "object", action: "update", ref: { apiVersion: "", kind: "Mwan3Rule", ... } }]
 */
export { parseIntake, DEFAULT_MAX_BODY_BYTES } from "./parse.js";
export type { RawHeaders, RawRequest, ParseOptions } from "./parse.js";
export { IntakeError, INTAKE_ERROR_STATUS, isIntakeError } from "./errors.js";
export type { IntakeErrorCode, IntakeErrorStatus } from "./errors.js";
export { PING_EVENT_TYPE, ACCEPTED_EVENT_TYPES } from "./schemas.js";
export { RESYNC_EVENT_TYPE } from "./types.js";
export type { IntakeEvent, ObjectRef, ResyncScope, WatchAction } from "./types.js";
