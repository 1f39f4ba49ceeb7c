/**
 * shared/cnf: the HTTP edge to SD-EWAN CNF pods (OpenWrt LuCI REST API under /cgi-bin/luci/):
 * where a pod's API is, credentials from a Secret (never logged), the sysauth login and its
 * cookie cache, timeouts and a short retry, zod-checked replies, collection CRUD, paced service
 * restarts (restarts.ts), and typed errors with their class (transient / dependency / permanent).
 * Does not know rule kinds (shared/kinds), pods (shared/kube) or HTTP replies (shared/runtime).
 * Example and details: docs/code-notes.md (cnf); docs/cnf.md.
 */
export {
  CnfClient,
  type CnfCallCounter,
  type CnfClientOptions,
  type CnfCollectionRef,
  type CnfLog,
  type CnfReplyObject,
  type CnfReplySchemas,
  type CnfRequestBody,
  type CnfServiceAction,
} from "./client.js";
export {
  CnfCredentials,
  cnfCaFromEnv,
  cnfCredentialsFromEnv,
  cnfCredentialsFromSecretData,
  REDACTED,
  type Env,
  type ReadTextFile,
} from "./credentials.js";
export {
  CNF_PORT_ANNOTATION,
  CNF_SCHEME_ANNOTATION,
  DEFAULT_CNF_TUNING,
  cnfBaseUrl,
  cnfClientTuningFromEnv,
  cnfEndpointConfig,
  type CnfClientTuning,
  type CnfEndpointConfig,
  type CnfRetryPolicy,
  type CnfScheme,
} from "./endpoint.js";
export {
  CnfAbortedError,
  CnfBadReplyError,
  CnfConfigError,
  CnfError,
  CnfHttpError,
  CnfLoginError,
  CnfTimeoutError,
  CnfUnreachableError,
  classifyCnfFailure,
  cnfFailureReason,
  isCnfError,
  isRetryableNow,
  isTransient,
  type CnfErrorCode,
  type CnfFailureClass,
  type CnfRejection,
} from "./errors.js";
export { genericObjectSchema } from "./replies.js";
export { CnfSessionCache, processCnfSessions } from "./session.js";
export {
  CnfRestartPacer,
  DEFAULT_RESTART_MIN_INTERVAL_MS,
  DEFAULT_RESTART_QUIET_MS,
  processCnfRestarts,
  type RestartMode,
  type RestartOptions,
  type RestartVerdict,
} from "./restarts.js";
