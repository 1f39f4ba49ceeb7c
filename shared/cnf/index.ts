/**
 * shared/cnf: the HTTP edge to SD-EWAN CNF pods (OpenWrt LuCI REST API under /cgi-bin/luci/).
 *
 * Owns: where a CNF pod's API is (CNF_SCHEME / CNF_PORT and the Deployment annotations
 * sdewan.akraino.org/cnf-scheme and sdewan.akraino.org/cnf-port), credentials from a Secret
 * (never logged), the sysauth login with a per-process cookie cache and one re-login on 403,
 * per-request timeouts, a short in-process retry (p-retry) of transient failures, zod-checked
 * replies, collection CRUD and the service restart, and typed errors with stable codes plus
 * their classification (transient / dependency / permanent).
 *
 * Does not know rule kinds (the registry in shared/rules says which collection a kind uses and
 * how to compare), pods (shared/kube finds them) or HTTP replies to events (shared/runtime).
 *
 * Example:
 *   const endpoint = cnfEndpointConfig(process.env, deployment.metadata?.annotations);
 *   const client = new CnfClient({
 *     baseUrl: cnfBaseUrl(endpoint, pod.status.podIP),
 *     credentials: cnfCredentialsFromEnv(process.env),
 *     calls: ctx.calls, signal: ctx.signal, log: ctx.log,
 *   });
 *   const actual = await client.get(entry.cnf, name, { item: entry.cnfObjectSchema });
 *   if (!entry.cnfEqual(desired, actual)) { await client.update(entry.cnf, desired); changed = true; }
 *   ...once per pod, if anything changed: await client.restartService("mwan3");
 *   catch (e) { classifyCnfFailure(e) -> "transient" | "dependency" | "permanent" }
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
