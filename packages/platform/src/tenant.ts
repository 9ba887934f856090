import { createHash } from 'node:crypto';

/**
 * A fixed-length, collision-free key for a user id (the token's `sub`, any 1–256 characters).
 * Used in Redis keys and S3 prefixes so that no user id can escape or collide with another's
 * namespace, whatever characters it holds.
 */
export function tenantKey(userId: string): string {
  let key = recent.get(userId);
  if (key === undefined) {
    key = createHash('sha256').update(userId, 'utf8').digest('hex');
    // A bounded memo: every request of a user needs its key several times.
    if (recent.size >= RECENT_MAX) recent.clear();
    recent.set(userId, key);
  }
  return key;
}

const RECENT_MAX = 10_000;
const recent = new Map<string, string>();

/** Redis hash tag of one user: every key of the user lands in one slot on Redis Cluster. */
export function userTag(userId: string): string {
  return `{u:${tenantKey(userId)}}`;
}
