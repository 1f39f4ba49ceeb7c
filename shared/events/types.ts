/**
 * What event intake hands to a function: which objects to look at, never what to do.
 * Every CloudEvent shape (binary, structured, batch; ApiServerSource Resource/Reference mode),
 * the resync event and a plain curl ref all become a list of IntakeEvent.
 */

/**
 * Identifies one Kubernetes object. `namespace` is "" for cluster-scoped objects.
 * `apiVersion` is "" when the sender did not say (a plain curl ref may omit it): resolve it by kind.
 */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

export type WatchAction = "add" | "update" | "delete";

/** The project's resync event type (PingSource / connector schedule). */
export const RESYNC_EVENT_TYPE = "org.akraino.sdewan.resync";

export interface ResyncScope {
  /** Absent = every namespace. */
  readonly namespace?: string;
  /** Absent = every purpose; only meaningful with a namespace. */
  readonly purpose?: string;
}

export type IntakeEvent =
  | {
      readonly type: "object";
      /** CloudEvent id, for logs only: ApiServerSource makes a new id per send, never dedupe on it. */
      readonly id: string;
      readonly action: WatchAction;
      readonly ref: ObjectRef;
      /** Resource mode: the object as the watch saw it (a hint; functions re-read live state). */
      readonly object?: Readonly<Record<string, unknown>>;
      /** The CloudEvent type it arrived as; absent for a plain ref. For logs and metrics only. */
      readonly ceType?: string;
    }
  | {
      readonly type: "resync";
      readonly id: string;
      readonly scope: ResyncScope;
      /** RESYNC_EVENT_TYPE or Knative PingSource's type. For logs and metrics only. */
      readonly ceType?: string;
    };
