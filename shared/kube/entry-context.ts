/**
 * What every capability's entry is handed beside its event: one signature, `(event, ctx)`, where
 * ctx is this plus the capability's own settings (docs/overview.md, "One shape").
 */
import type { Log } from "../core/context.js";
import type { KubeClient } from "./client.js";
import type { EventRecorder } from "./event-recorder.js";

export interface EntryContext {
  /** The API client, counting this event's calls. */
  readonly kube: KubeClient;
  readonly log: Log;
  /** The time now, RFC 3339: read where it is written, so a long event writes the real time. */
  readonly now: () => string;
  /** Where Kubernetes Events go (best-effort, bounded); none when absent. */
  readonly events?: EventRecorder;
}
