import { createHash } from 'node:crypto';

/**
 * A fixed-length, collision-free key for a user id (the token's `sub`, any 1–256 characters).
 * Used in Redis keys and S3 prefixes so that no user id can escape or collide with another's
 * namespace, whatever characters it holds.
 */
export function tenantKey(userId: string): string {
  return createHash('sha256').update(userId, 'utf8').digest('hex');
}

/** Redis hash tag of one user: every key of the user lands in one slot on Redis Cluster. */
export function userTag(userId: string): string {
  return `{u:${tenantKey(userId)}}`;
}
