import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { createLogger, createRedis, type RedisClient } from '@workspace/platform';
import { RedisLock } from '../src/adapters/lock.redis.js';
import { createS3Client, ensureBucket, MinioObjectStore } from '../src/adapters/object-store.minio.js';
import { RedisRemovedAgents } from '../src/adapters/removed-agents.redis.js';
import { Knowledge } from '../src/domain/knowledge.js';
import type { FileChange, FileEvents } from '../src/domain/ports.js';
import { Uploads } from '../src/domain/uploads.js';
import { Workspace } from '../src/domain/workspace.js';

export const MiB = 1024 * 1024;

/** Keeps the changes reported, per user, in order (the outbox adapter has its own test). */
export class RecordedEvents implements FileEvents {
  readonly changes: (FileChange & { userId: string })[] = [];
  async report(userId: string, changes: readonly FileChange[]): Promise<void> {
    this.changes.push(...changes.map((c) => ({ ...c, userId })));
  }
  of(userId: string): FileChange[] {
    return this.changes.filter((c) => c.userId === userId).map(({ userId: _, ...c }) => c);
  }
}

/** The files domain on the tests' real S3 store (a fresh bucket) and Redis. */
export async function realFiles(options: { maxUploadBytes?: number; maxReadBytes?: number; partSize?: number } = {}) {
  const { s3: endpoint, redisUrl } = inject('infra');
  const bucket = `int-${randomBytes(8).toString('hex')}`;
  const client = createS3Client({ ...endpoint, bucket });
  await ensureBucket(client, bucket, endpoint.region);
  const store = new MinioObjectStore({ client, bucket, partSize: options.partSize ?? 5 * MiB });
  const redis: RedisClient = createRedis({ url: redisUrl });
  const logger = createLogger('files-test', 'silent');
  const lock = new RedisLock(redis, logger);
  const events = new RecordedEvents();
  return {
    client,
    bucket,
    store,
    redis,
    lock,
    events,
    workspace: new Workspace({ store, lock, events, maxReadBytes: options.maxReadBytes ?? 10 * MiB }),
    uploads: new Uploads({ store, lock, events, maxUploadBytes: options.maxUploadBytes ?? 64 * MiB, logger }),
    knowledge: new Knowledge({ store, lock, removed: new RedisRemovedAgents(redis) }),
    close: async () => {
      await redis.quit();
    },
  };
}

/** `total` bytes in chunks of `chunk`, each chunk filled with its index so content is checkable. */
export async function* bytes(total: number, chunk = 64 * 1024, fail?: Error): AsyncIterable<Uint8Array> {
  for (let sent = 0, i = 0; sent < total; i++) {
    const n = Math.min(chunk, total - sent);
    yield Buffer.alloc(n, i % 251);
    sent += n;
  }
  if (fail) throw fail;
}

export async function collect(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of source) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

export async function* text(s: string): AsyncIterable<Uint8Array> {
  yield Buffer.from(s, 'utf8');
}
