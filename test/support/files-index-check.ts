import { tenantKey } from '@workspace/platform';
import { auditIndexAt, type IndexAudit } from '../../services/files/test/index-audit.js';
import { s3Client, testRedis } from './backends.js';
import type { ApiUser, SharedStack } from './stack.js';

/**
 * An independent audit of one user's metadata index and byte accounting, on a stack: the audit
 * itself (what it recounts and checks) is services/files/test/index-audit.ts, which the files
 * service's integration suites use on their own Redis.
 */
export type { IndexAudit };

/** Reads the user's index and checks its invariants; `agents`: the Agents whose knowledge pins to count too. */
export async function auditIndex(stack: SharedStack, u: ApiUser, agents: readonly string[] = []): Promise<IndexAudit> {
  const bucket = stack.services.files!.env.S3_BUCKET!;
  const P = `{u:${tenantKey(u.sub)}}:fs:${bucket}:`;
  const redis = testRedis('index-audit');
  try {
    return await auditIndexAt(redis, P, agents);
  } finally {
    await redis.quit();
  }
}

/** The object keys of the user in the stack's bucket, sorted. */
export async function storedObjects(stack: SharedStack, u: ApiUser): Promise<string[]> {
  const bucket = stack.services.files!.env.S3_BUCKET!;
  const keys: string[] = [];
  for await (const o of s3Client().listObjectsV2(bucket, `b/${tenantKey(u.sub)}/`, true) as AsyncIterable<{ name?: string }>) if (o.name) keys.push(o.name);
  return keys.sort();
}
