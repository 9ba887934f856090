import { createHash } from 'node:crypto';
import type { Logger, RedisClient } from '@workspace/platform';
import { parsePath, segmentProblem } from '../domain/paths.js';
import type { BlobStore } from '../domain/ports.js';
import { newRevision } from '../domain/uploads.js';
import type { RedisFileIndex } from './index.redis.js';

const LOCK_TTL_SECONDS = 120;
const TENANT = /^[0-9a-f]{64}$/;
const AGENT_ID = /^agt_[0-9a-f]{32}$/;
const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Imports a bucket written by the previous version (objects at `ws/<tenant>/<path>`, knowledge
 * copies at `kn/<tenant>/<agentId>/<sha256>`) into the index, once per bucket. The old objects
 * become the files' bytes as they are (nothing is copied; nothing writes under those keys any
 * more). One replica works at a time under a lock that it keeps renewing; every step is
 * idempotent (a path already in the index is left as it is), so a replica that dies halfway
 * is simply followed by another.
 */
export async function migrateOldLayout(options: { redis: RedisClient; index: RedisFileIndex; blobs: BlobStore; logger: Logger }): Promise<void> {
  const { redis, index, blobs, logger } = options;
  const done = `files:${index.keys.namespace}:migrated:v2`;
  const lock = `files:${index.keys.namespace}:migrating`;
  for (;;) {
    if (await redis.get(done)) return;
    if (await redis.set(lock, process.pid.toString(), 'EX', LOCK_TTL_SECONDS, 'NX')) break;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  const renew = setInterval(() => void redis.expire(lock, LOCK_TTL_SECONDS).catch(() => undefined), (LOCK_TTL_SECONDS * 1000) / 4).unref();
  try {
    let files = 0;
    let pins = 0;
    for await (const object of blobs.list('ws/')) {
      const [, tenant = '', ...rest] = object.key.split('/');
      if (!TENANT.test(tenant) || rest.length === 0 || rest.some((s) => segmentProblem(s) !== undefined)) continue;
      let path: string;
      try {
        path = parsePath(`/files/${rest.join('/')}`).path;
      } catch {
        continue;
      }
      const sha256 = await hashOf(blobs, object.key);
      const entry = { size: object.size, mtime: object.lastModified.getTime(), sha256, key: object.key, revision: newRevision() };
      if (await index.importFile(tenant, path, entry)) files++;
    }
    for await (const object of blobs.list('kn/')) {
      const [, tenant = '', agentId = '', sha256 = ''] = object.key.split('/');
      if (TENANT.test(tenant) && AGENT_ID.test(agentId) && SHA256.test(sha256) && (await index.importPin(tenant, agentId, sha256, object.key, object.size))) pins++;
    }
    await redis.set(done, new Date().toISOString());
    if (files + pins > 0) logger.info({ files, pins }, 'imported the previous storage layout into the index');
  } finally {
    clearInterval(renew);
    await redis.del(lock);
  }
}

async function hashOf(blobs: BlobStore, key: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of await blobs.read(key)) hash.update(chunk);
  return hash.digest('hex');
}
