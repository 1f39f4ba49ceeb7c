/**
 * on-deployment-ready: add/update/delete of a CNF Deployment or Pod, and the periodic resync ->
 * bring every rule of that CNF in sync on every ready pod. Stub until the CNF-sync issue: 501.
 */
import type { EventFunction } from "../../shared/runtime/function.js";
import { notImplementedEventFunction } from "../../shared/runtime/not-implemented.js";

export const onDeploymentReady: EventFunction = notImplementedEventFunction(
  "on-deployment-ready",
  "not implemented yet: syncing every rule of a CNF lands with the CNF-sync issue",
);

export default onDeploymentReady;
