/**
 * The slice of RBAC the bucket-permission policy reads: bindings, their subjects, and the
 * `sdewan-bucket-type-permission` annotation of the Roles and ClusterRoles they point at.
 * Pure: the shell (observe.ts) fills these shapes from the API server.
 */
import * as z from "zod";
import { BUCKET_TYPE_LABEL } from "../kinds/index.js";
import { matchesWildcard } from "./wildcard.js";

export const BUCKET_LABEL = BUCKET_TYPE_LABEL;
export const BUCKET_PERMISSION_ANNOTATION = "sdewan-bucket-type-permission";
export const CLUSTER_ADMIN_GROUP = "system:masters";

export interface RequestUser {
  readonly username: string;
  readonly groups: readonly string[];
}

export interface BindingSubject {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string | undefined;
}

export interface RoleRef {
  readonly kind: string;
  readonly name: string;
}

export interface Binding {
  readonly kind: "RoleBinding" | "ClusterRoleBinding";
  readonly name: string;
  /** "" for a ClusterRoleBinding. */
  readonly namespace: string;
  readonly roleRef: RoleRef;
  readonly subjects: readonly BindingSubject[];
}

/** A Role or ClusterRole as far as the policy cares: who it is and its raw annotation, if any. */
export interface AnnotatedRole {
  readonly kind: "Role" | "ClusterRole";
  /** "" for a ClusterRole. */
  readonly namespace: string;
  readonly name: string;
  readonly bucketPermission?: string | undefined;
}

/** Which Role or ClusterRole a binding grants; a RoleBinding may grant a ClusterRole within its namespace. */
export interface RoleKey {
  readonly kind: "Role" | "ClusterRole";
  readonly namespace: string;
  readonly name: string;
}

const SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:";

function subjectMatches(subject: BindingSubject, binding: Binding, user: RequestUser): boolean {
  switch (subject.kind) {
    case "User":
      return subject.name === user.username;
    case "Group":
      return user.groups.includes(subject.name);
    case "ServiceAccount": {
      // A RoleBinding's ServiceAccount subject defaults to the binding's own namespace.
      const namespace = subject.namespace ?? binding.namespace;
      return user.username === `${SERVICE_ACCOUNT_PREFIX}${namespace}:${subject.name}`;
    }
    default:
      return false;
  }
}

/** The bindings that apply to this user: any subject matches the user, one of its groups, or its service account. */
export function bindingsForUser(bindings: readonly Binding[], user: RequestUser): Binding[] {
  return bindings.filter((binding) =>
    binding.subjects.some((subject) => subjectMatches(subject, binding, user)),
  );
}

/** Follows `roleRef.kind`; unknown kinds grant nothing. Deduplicated, in binding order. */
export function rolesGrantedBy(bindings: readonly Binding[]): RoleKey[] {
  const seen = new Set<string>();
  const keys: RoleKey[] = [];
  for (const binding of bindings) {
    const { kind, name } = binding.roleRef;
    if (kind !== "Role" && kind !== "ClusterRole") continue;
    // A Role is always in the RoleBinding's namespace; ClusterRoleBindings cannot name a Role.
    if (kind === "Role" && binding.kind === "ClusterRoleBinding") continue;
    const key: RoleKey = { kind, namespace: kind === "Role" ? binding.namespace : "", name };
    const id = roleKeyId(key);
    if (seen.has(id)) continue;
    seen.add(id);
    keys.push(key);
  }
  return keys;
}

export function roleKeyId(key: RoleKey): string {
  return key.kind === "Role" ? `Role ${key.namespace}/${key.name}` : `ClusterRole ${key.name}`;
}

const bucketPermissionSchema = z.record(z.string(), z.array(z.string()));

/** resource pattern -> bucket patterns, from the annotation's JSON. */
export type BucketPermission = z.infer<typeof bucketPermissionSchema>;

export type ParsedBucketPermission =
  | { readonly ok: true; readonly permission: BucketPermission }
  | { readonly ok: false; readonly problem: string };

export function parseBucketPermission(raw: string): ParsedBucketPermission {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    return {
      ok: false,
      problem: `not JSON (${error instanceof Error ? error.message : "parse error"})`,
    };
  }
  const parsed = bucketPermissionSchema.safeParse(json);
  return parsed.success
    ? { ok: true, permission: parsed.data }
    : { ok: false, problem: "not a JSON object of resource pattern -> array of bucket patterns" };
}

export function permissionGrants(
  permission: BucketPermission,
  resource: string,
  bucket: string,
): boolean {
  return Object.entries(permission).some(
    ([resourcePattern, bucketPatterns]) =>
      matchesWildcard(resourcePattern, resource) &&
      bucketPatterns.some((bucketPattern) => matchesWildcard(bucketPattern, bucket)),
  );
}
