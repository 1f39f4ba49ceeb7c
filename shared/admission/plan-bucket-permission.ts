/**
 * Bucket-type permission: who may create, change or delete a rule in a given `sdewan-bucket-type`.
 * An extra gate on top of RBAC (it never grants what RBAC denies). Objects without the label are
 * governed by RBAC alone, so plain RBAC users are not locked out of unlabelled rules.
 */
import { describeObject, labelOf, quoteValue } from "./objects.js";
import {
  BUCKET_LABEL,
  BUCKET_PERMISSION_ANNOTATION,
  CLUSTER_ADMIN_GROUP,
  bindingsForUser,
  parseBucketPermission,
  permissionGrants,
  roleKeyId,
  rolesGrantedBy,
  type BucketPermission,
  type RequestUser,
} from "./rbac.js";
import type { AdmissionRequest } from "./review.js";
import type { RbacSnapshot } from "./snapshot.js";
import { POLICY, allow, deny, type Verdict } from "./verdict.js";

/** One bucket the user must be allowed to use, and why (which side of the request carries it). */
export interface BucketCheck {
  readonly bucket: string;
  readonly side: "new" | "old";
}

/**
 * CREATE checks the new bucket; DELETE the existing one; UPDATE both, so nobody can move a rule
 * out of (or into) a bucket they may not use. Removing the label counts as leaving the old bucket.
 */
export function bucketsToCheck(request: AdmissionRequest): BucketCheck[] {
  const newBucket =
    request.operation === "DELETE" ? undefined : labelOf(request.object, BUCKET_LABEL);
  const oldBucket =
    request.operation === "CREATE" ? undefined : labelOf(request.oldObject, BUCKET_LABEL);
  const checks: BucketCheck[] = [];
  if (oldBucket !== undefined) checks.push({ bucket: oldBucket, side: "old" });
  if (newBucket !== undefined && newBucket !== oldBucket)
    checks.push({ bucket: newBucket, side: "new" });
  return checks;
}

export function isClusterAdmin(user: RequestUser): boolean {
  return user.groups.includes(CLUSTER_ADMIN_GROUP);
}

/** Whether the bucket policy needs RBAC objects at all for this request. */
export function needsRbac(request: AdmissionRequest): boolean {
  return bucketsToCheck(request).length > 0 && !isClusterAdmin(request.userInfo);
}

interface GrantedPermissions {
  readonly permissions: readonly BucketPermission[];
  readonly notes: readonly string[];
}

/** The parsed annotations of every Role/ClusterRole bound to the user (invalid ones become notes). */
export function grantedPermissions(
  user: RequestUser,
  namespace: string,
  rbac: RbacSnapshot,
): GrantedPermissions {
  const namespaceBindings = rbac.roleBindings.filter((binding) => binding.namespace === namespace);
  const bindings = bindingsForUser([...namespaceBindings, ...rbac.clusterRoleBindings], user);
  const roles = new Map(rbac.roles.map((role) => [roleKeyId(role), role]));
  const permissions: BucketPermission[] = [];
  const notes: string[] = [];
  for (const key of rolesGrantedBy(bindings)) {
    const raw = roles.get(roleKeyId(key))?.bucketPermission;
    if (raw === undefined) continue;
    const parsed = parseBucketPermission(raw);
    if (parsed.ok) permissions.push(parsed.permission);
    else
      notes.push(
        `${roleKeyId(key)}: annotation ${BUCKET_PERMISSION_ANNOTATION} ignored: ${parsed.problem}`,
      );
  }
  return { permissions, notes };
}

function verbFor(request: AdmissionRequest, check: BucketCheck): string {
  if (request.operation === "DELETE") return "delete";
  if (request.operation === "CREATE") return "create";
  return check.side === "old" ? "change or move out of" : "move into";
}

export function planBucketPermission(request: AdmissionRequest, rbac: RbacSnapshot): Verdict {
  const checks = bucketsToCheck(request);
  const user = request.userInfo;
  if (checks.length === 0 || isClusterAdmin(user)) return allow();
  const resource = request.resource.resource;
  const { permissions, notes } = grantedPermissions(user, request.namespace, rbac);
  const refused = checks.find(
    (check) =>
      !permissions.some((permission) => permissionGrants(permission, resource, check.bucket)),
  );
  if (refused === undefined) return { ...allow(), notes };
  const denial = deny(
    POLICY.bucketPermission,
    403,
    `user ${quoteValue(user.username)} may not ${verbFor(request, refused)} ${resource} in bucket ` +
      `${BUCKET_LABEL}=${quoteValue(refused.bucket)} (${describeObject(request)}): no Role or ClusterRole ` +
      `bound to the user, its groups or its service account grants that bucket`,
    `ask an administrator to bind you to a Role or ClusterRole annotated ${BUCKET_PERMISSION_ANNOTATION} ` +
      `with {"${resource}": ["${refused.bucket}"]}, or use a bucket you are granted`,
  );
  return { ...denial, notes };
}
