// A NetpolStore in memory for the netpol unit tests: the world's raw objects and the stored
// tables with resourceVersions, preconditions checked as the API server checks them (a replace
// or delete at an old version is a conflict, a create of an existing table too), and label
// selectors of the two forms the shell uses (`key`, `key=value`).
import { KubeError } from "../../../shared/kube/errors.js";
import {
  canonicalJson,
  storedTable,
  type DesiredTable,
  type NetpolStore,
  type StoredTable,
  type TableKind,
} from "../../../shared/netpol/index.js";

interface RawObject {
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

/** One requirement of a label selector string, as the API server reads it. */
function requirementMatches(requirement: string, labels: Record<string, string>): boolean {
  const set = /^(\S+) (in|notin) \(([^)]*)\)$/.exec(requirement);
  if (set !== null) {
    const [, key = "", operator, values = ""] = set;
    const listed = key in labels && values.split(",").includes(labels[key] ?? "");
    return operator === "in" ? listed : !listed;
  }
  const [key = "", value] = requirement.split(/!?=/);
  if (value === undefined)
    return requirement.startsWith("!") ? !(key.slice(1) in labels) : key in labels;
  return requirement.includes("!=") ? labels[key] !== value : labels[key] === value;
}

/** `a,b in (x,y),c!=z`: every requirement (commas inside parentheses belong to a set). */
export function selectorMatches(selector: string, labels: Record<string, string>): boolean {
  const requirements = selector.split(/,(?![^(]*\))/);
  return requirements.every((r) => requirementMatches(r.trim(), labels));
}

export class MemoryNetpolStore implements NetpolStore {
  private version = 0;
  readonly tables = new Map<string, RawObject>();
  readonly requests: string[] = [];

  constructor(
    public policies: RawObject[],
    public pods: RawObject[],
    public namespaces: RawObject[],
  ) {}

  private next(): string {
    this.version += 1;
    return String(this.version);
  }

  private key(kind: TableKind, namespace: string, name: string): string {
    return `${kind}/${namespace}/${name}`;
  }

  private stored(kind: TableKind, object: RawObject): StoredTable {
    return storedTable(kind, structuredClone(object));
  }

  listPolicies(namespace?: string): Promise<readonly unknown[]> {
    this.requests.push("list policies");
    return Promise.resolve(
      structuredClone(
        this.policies.filter((p) => namespace === undefined || p.metadata.namespace === namespace),
      ),
    );
  }

  listPods(): Promise<readonly unknown[]> {
    this.requests.push("list pods");
    return Promise.resolve(
      structuredClone(
        this.pods.filter((p) => {
          const phase = (p.status as { phase?: string } | undefined)?.phase;
          return phase !== "Succeeded" && phase !== "Failed";
        }),
      ),
    );
  }

  listNamespaces(): Promise<readonly unknown[]> {
    this.requests.push("list namespaces");
    return Promise.resolve(structuredClone(this.namespaces));
  }

  getPod(namespace: string, name: string): Promise<unknown> {
    this.requests.push("get pod");
    const found = this.pods.find(
      (p) => p.metadata.namespace === namespace && p.metadata.name === name,
    );
    return Promise.resolve(found === undefined ? null : structuredClone(found));
  }

  getNamespace(name: string): Promise<unknown> {
    this.requests.push("get namespace");
    const found = this.namespaces.find((n) => n.metadata.name === name);
    return Promise.resolve(found === undefined ? null : structuredClone(found));
  }

  listTables(kind: TableKind, namespace: string | null, labelSelector?: string) {
    this.requests.push(`list ${kind}${labelSelector === undefined ? "" : " by label"}`);
    const matches = (labels: Record<string, string> = {}): boolean =>
      labelSelector === undefined || selectorMatches(labelSelector, labels);
    const found = [...this.tables.entries()]
      .filter(([key]) => key.startsWith(`${kind}/`))
      .map(([, object]) => object)
      .filter((o) => namespace === null || o.metadata.namespace === namespace)
      .filter((o) => matches(o.metadata.labels))
      .map((o) => this.stored(kind, o));
    return Promise.resolve(found);
  }

  getTable(kind: TableKind, namespace: string, name: string) {
    this.requests.push(`get ${kind}`);
    const found = this.tables.get(this.key(kind, namespace, name));
    return Promise.resolve(found === undefined ? null : this.stored(kind, found));
  }

  createTable(desired: DesiredTable): Promise<void> {
    this.requests.push(`create ${desired.kind}`);
    const key = this.key(desired.kind, desired.namespace, desired.name);
    if (this.tables.has(key)) return Promise.reject(new KubeError("conflict", `${key} exists`));
    const object = structuredClone(desired.object) as RawObject;
    object.metadata.resourceVersion = this.next();
    this.tables.set(key, object);
    return Promise.resolve();
  }

  replaceTable(desired: DesiredTable, resourceVersion: string): Promise<void> {
    this.requests.push(`replace ${desired.kind}`);
    const key = this.key(desired.kind, desired.namespace, desired.name);
    const current = this.tables.get(key);
    if (current === undefined) return Promise.reject(new KubeError("notFound", `${key} is gone`));
    if (current.metadata.resourceVersion !== resourceVersion) {
      return Promise.reject(new KubeError("conflict", `${key} changed`));
    }
    const object = structuredClone(desired.object) as RawObject;
    object.metadata.resourceVersion = this.next();
    this.tables.set(key, object);
    return Promise.resolve();
  }

  deleteTable(stored: StoredTable): Promise<void> {
    this.requests.push(`delete ${stored.kind}`);
    const key = this.key(stored.kind, stored.namespace, stored.name);
    const current = this.tables.get(key);
    if (current === undefined) return Promise.resolve();
    if (current.metadata.resourceVersion !== stored.resourceVersion) {
      return Promise.reject(new KubeError("conflict", `${key} changed`));
    }
    this.tables.delete(key);
    return Promise.resolve();
  }

  /**
   * Every table as stored, without resourceVersions, keys sorted (as the API server returns
   * them): what two stores must agree on.
   */
  snapshot(): string {
    const entries = [...this.tables.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return canonicalJson(
      entries.map(([key, o]) => {
        const { resourceVersion: _rv, ...metadata } = o.metadata;
        return [key, { ...o, metadata }];
      }),
    );
  }
}
