// The control plane this Jest process started: globalSetup and globalTeardown run in the same
// process, and globalThis is what they share.
import type { ControlPlane } from "../../../dev/control-plane/control-plane.js";

export const CLUSTER_ENV = "SDEWAN_TEST_CLUSTER";

const key = Symbol.for("sdewan-functions.control-plane");
const store = globalThis as unknown as Record<symbol, ControlPlane | undefined>;

export const ownedControlPlane = {
  get: (): ControlPlane | undefined => store[key],
  set: (cp: ControlPlane | undefined): void => {
    store[key] = cp;
  },
};
