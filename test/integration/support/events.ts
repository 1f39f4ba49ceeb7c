/**
 * Events as `kubectl describe` reads them: the core/v1 view of what the functions write through
 * events.k8s.io/v1 (the API server serves both views of one object).
 */
import { kubeObjectSchema } from "../../../shared/core/objects.js";
import type { ResourceType } from "../../../shared/kube/index.js";

export const CORE_EVENTS: ResourceType = {
  group: "",
  version: "v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
  statusSubresource: false,
  schema: kubeObjectSchema,
};
