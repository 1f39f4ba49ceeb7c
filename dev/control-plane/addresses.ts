// The address plan of every cluster on this machine, the real node's (../shared/tools/real-node)
// too: Pods in 100.64.0.0/16, Services in 100.65.0.0/16, the node at 100.66.0.1, listeners on
// 127.0.0.0/8. Never 10/8, 172.16/12 or 192.168/16: the team's networks (test/unit/dev).

/** kube-apiserver's --service-cluster-ip-range: a /16, the ClusterLink bench makes 2,000 Services. */
export const SERVICE_RANGE = "100.65.0.0/16";
/** The `kubernetes` Service's ClusterIP: the range's first address. */
export const KUBERNETES_SERVICE_IP = "100.65.0.1";
/** Where the Pod IPs that dev tools, benches and tests write into Pod status come from. */
export const POD_RANGE = "100.64.0.0/16";
/** status.hostIP of those Pods: the real node's address. */
export const NODE_IP = "100.66.0.1";

/** The n-th address of POD_RANGE, 0 <= n < 65,536. */
export function podAddress(n: number): string {
  if (!Number.isInteger(n) || n < 0 || n > 0xffff) {
    throw new RangeError(`podAddress(${n}): POD_RANGE ${POD_RANGE} holds 65,536 addresses`);
  }
  return `100.64.${n >> 8}.${n & 255}`;
}

/** The n-th address of SERVICE_RANGE (a ClusterIP as a stand-in DNS answers it), 1 <= n < 65,535. */
export function serviceAddress(n: number): string {
  if (!Number.isInteger(n) || n < 1 || n > 0xfffe) {
    throw new RangeError(`serviceAddress(${n}): SERVICE_RANGE ${SERVICE_RANGE} has 65,534 hosts`);
  }
  return `100.65.${n >> 8}.${n & 255}`;
}
