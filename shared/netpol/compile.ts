/**
 * Raw objects (as listed from the API server) -> compiled tables, in one pure call: parse each
 * at the boundary (observed.ts), report what does not parse, compile the rest (plan-tables.ts).
 */
import {
  parseNetpolNamespace,
  parseNetpolPod,
  parseNetworkPolicy,
  type Parsed,
} from "./observed.js";
import { compileNetworkPolicies, type CompiledNetpol, type NetpolWorld } from "./plan-tables.js";

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

export function compileObjects(raw: RawWorld): CompiledObjects {
  const { world, unreadable } = parseWorld(raw);
  return { ...compileNetworkPolicies(world), unreadable };
}
