import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { parseEvent, RedisOutbox } from '@workspace/events';
import { createLogger, createRedis, userTag, type RedisClient } from '@workspace/platform';
import { newUserId } from '@workspace/testkit';
import { OutboxFileEvents } from '../src/adapters/file-events.outbox.js';

let redis: RedisClient;
let outbox: RedisOutbox;
beforeAll(() => {
  redis = createRedis({ url: inject('infra').redisUrl, name: 'files-events-test' });
  // An outbox of its own: the relays of files services on the same Redis never see it.
  outbox = new RedisOutbox({ redis, namespace: `files-test-${randomUUID()}` });
});
afterAll(async () => {
  for (const { tag } of await outbox.pending(0, 1_000)) await redis.del(outbox.listKey(tag));
  await redis.del(outbox.pendingKey);
  await redis.quit();
});

describe('file events outbox', () => {
  it('file events — reports become CloudEvents in the user\'s outbox, in order, and wake the relay', async () => {
    const u = newUserId();
    const woken: string[] = [];
    const events = new OutboxFileEvents({ redis, outbox, logger: createLogger('files-test', 'silent'), onEvents: (tag) => woken.push(tag) });
    await events.report(u, [{ type: 'file.created', path: '/files/a.md', size: 3 }]);
    await events.report(u, [
      { type: 'file.updated', path: '/files/a.md', size: 4 },
      { type: 'file.deleted', path: '/files/a.md' },
    ]);
    await events.report(u, []);
    const tag = userTag(u);
    expect(woken).toEqual([tag, tag]);
    expect((await outbox.pending(0, 1_000)).map((p) => p.tag)).toContain(tag);
    const queued = (await outbox.peek(tag, 10)).map((raw) => parseEvent(raw));
    expect(queued.map((e) => [e.type, e.subject, e.source, e.data])).toEqual([
      ['file.created', '/files/a.md', '/workspace/files', { userId: u, path: '/files/a.md', size: 3 }],
      ['file.updated', '/files/a.md', '/workspace/files', { userId: u, path: '/files/a.md', size: 4 }],
      ['file.deleted', '/files/a.md', '/workspace/files', { userId: u, path: '/files/a.md' }],
    ]);
    expect(new Set(queued.map((e) => e.id)).size).toBe(3);
  });
});
