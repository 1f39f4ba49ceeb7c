/**
 * egress-group-sync: add/update/delete of an Antrea Egress, a Pod or a Namespace -> recompute the
 * EgressGroup of every affected Egress and write it only if it changed. Stub until the egress
 * issue lands: answers 501.
 */
import type { EventFunction } from "../../shared/runtime/function.js";
import { notImplementedEventFunction } from "../../shared/runtime/not-implemented.js";

export const egressGroupSync: EventFunction = notImplementedEventFunction(
  "egress-group-sync",
  "not implemented yet: EgressGroup membership lands with the egress issue",
);

export default egressGroupSync;
