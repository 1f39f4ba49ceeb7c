/**
 * Raw objects (as listed from the API server) -> compiled tables, in one pure call: parse each
 * at the boundary (observed.ts), report what does not parse, compile the rest (plan-tables.ts),
 * and bound each peer set to what the API server can store (peer-set-bound.ts).
 */
import {
  parseNetpolNamespace,
  parseNetpolPod,
  parseNetworkPolicy,
  type Parsed,
} from "./observed.js";
import { DEFAULT_MAX_PEER_SET_BYTES, boundPeerSet } from "./peer-set-bound.js";
import { compileNetworkPolicies, type CompiledNetpol, type NetpolWorld } from "./plan-tables.js";

export interface CompileOptions {
  /** Bytes of JSON one peer set may take (peer-set-bound.ts). Default 1.25 MiB. */
  readonly maxPeerSetBytes?: number;
}

export interface RawWorld {
  readonly policies: readonly unknown[];
  readonly pods: readonly unknown[];
  readonly namespaces: readonly unknown[];
}

export interface CompiledObjects extends CompiledNetpol {
  /** Objects that did not parse, as "<kind>: <message>". */
  readonly unreadable: readonly string[];
}

function parseAll<T>(
  objects: readonly unknown[],
  parse: (o: unknown) => Parsed<T>,
  kind: string,
  unreadable: string[],
): T[] {
  return objects.flatMap((object) => {
    const parsed = parse(object);
    if (parsed.ok) return [parsed.value];
    unreadable.push(`${kind}: ${parsed.message}`);
    return [];
  });
}

export function parseWorld(raw: RawWorld): { world: NetpolWorld; unreadable: string[] } {
  const unreadable: string[] = [];
  const world: NetpolWorld = {
    policies: parseAll(raw.policies, parseNetworkPolicy, "NetworkPolicy", unreadable),
    pods: parseAll(raw.pods, parseNetpolPod, "Pod", unreadable),
    namespaces: parseAll(raw.namespaces, parseNetpolNamespace, "Namespace", unreadable),
  };
  return { world, unreadable };
}

/** The tables of a parsed world, as they are stored: every peer set within its bound. */
export function compileWorld(world: NetpolWorld, options: CompileOptions = {}): CompiledNetpol {
  const compiled = compileNetworkPolicies(world);
  const maxBytes = options.maxPeerSetBytes ?? DEFAULT_MAX_PEER_SET_BYTES;
  return { ...compiled, peerSets: compiled.peerSets.map((p) => boundPeerSet(p, maxBytes)) };
}

export function compileObjects(raw: RawWorld, options: CompileOptions = {}): CompiledObjects {
  const { world, unreadable } = parseWorld(raw);
  return { ...compileWorld(world, options), unreadable };
}
