/**
 * Events as `kubectl describe` reads them: the core/v1 view of what the functions write through
 * events.k8s.io/v1 (the API server serves both views of one object); and what writing them costs.
 */
import { kubeObjectSchema } from "../../../shared/core/objects.js";
import type { KubeClient, ResourceType } from "../../../shared/kube/index.js";
import { intercepting } from "./acting-before.js";

export const CORE_EVENTS: ResourceType = {
  group: "",
  version: "v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
  statusSubresource: false,
  schema: kubeObjectSchema,
};

/** The API requests a function makes for Events, counted apart from its other requests. */
export class EventRequests {
  count = 0;
  /** `real`, counting every Event request made through it (or its withCalls copies). */
  wrap(real: KubeClient): KubeClient {
    const isEvent = (type: unknown) => (type as ResourceType | undefined)?.plural === "events";
    return intercepting(real, ["create", "get", "mergePatch", "list"], (_, args, call) => {
      if (isEvent(args[0])) this.count += 1;
      return call();
    });
  }
}
