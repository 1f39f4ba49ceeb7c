/**
 * Whether what a CNF was told is what its services run: a service restarted after its
 * configuration last changed has loaded it; a change after the last restart has not. Tests that
 * batch restarts check with this that no change was left unrestarted.
 */
import type { SimRequestRecord } from "./control.js";

const CONFIG_PATH = /sdewan\/(mwan3|firewall|ipsec)\/v1\//;
const RESTART_PATH = /sdewan\/v1\/service\/(mwan3|firewall|ipsec)$/;

const accepted = (r: SimRequestRecord): boolean =>
  r.status !== null && r.status >= 200 && r.status < 300;

/**
 * Services whose last accepted configuration write came after their last accepted restart, from
 * the simulator's request log (`sim.requests()`, one sequence for both).
 */
export function unloadedServices(requests: readonly SimRequestRecord[]): string[] {
  const lastWrite = new Map<string, number>();
  const lastRestart = new Map<string, number>();
  for (const request of requests) {
    if (request.method === "GET" || !accepted(request)) continue;
    const restarted = RESTART_PATH.exec(request.path)?.[1];
    if (restarted !== undefined) {
      lastRestart.set(restarted, request.seq);
      continue;
    }
    const written = CONFIG_PATH.exec(request.path)?.[1];
    if (written !== undefined) lastWrite.set(written, request.seq);
  }
  return [...lastWrite]
    .filter(([service, seq]) => (lastRestart.get(service) ?? 0) < seq)
    .map(([service]) => service)
    .sort();
}
