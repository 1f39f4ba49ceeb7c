// Objects as a cluster may hold them from before a validation rule existed (an upgrade that added
// a CRD rule, or a CRD installed from upstream's manifests): written straight into etcd, past the
// API server's validation and admission. The API server then serves them like any other: its
// watch cache and every watcher see them added.
import { randomUUID } from "node:crypto";
import { clusterInfo } from "./cluster.js";

export interface UnvalidatedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
  };
  readonly spec?: unknown;
}

const base64 = (text: string): string => Buffer.from(text).toString("base64");

/**
 * Stores a namespaced custom object of `plural` as the API server would have stored it (uid,
 * creationTimestamp, generation 1), under the API server's default etcd prefix. Returns its uid.
 */
export async function storeUnvalidated(plural: string, object: UnvalidatedObject): Promise<string> {
  const [group] = object.apiVersion.split("/");
  const { namespace, name } = object.metadata;
  const uid = randomUUID();
  const stored = {
    ...object,
    metadata: {
      ...object.metadata,
      uid,
      generation: 1,
      creationTimestamp: `${new Date().toISOString().slice(0, 19)}Z`,
    },
  };
  // Create only: the key must not exist yet (its create revision is 0).
  const key = base64(`/registry/${group}/${plural}/${namespace}/${name}`);
  const response = await fetch(`${clusterInfo().etcdUrl}/v3/kv/txn`, {
    method: "POST",
    body: JSON.stringify({
      compare: [{ key, target: "CREATE", result: "EQUAL", create_revision: "0" }],
      success: [{ request_put: { key, value: base64(JSON.stringify(stored)) } }],
    }),
  });
  const answer = (await response.json()) as { succeeded?: boolean };
  if (response.status !== 200 || answer.succeeded !== true) {
    throw new Error(`etcd did not store ${plural} ${namespace}/${name}: ${JSON.stringify(answer)}`);
  }
  return uid;
}
