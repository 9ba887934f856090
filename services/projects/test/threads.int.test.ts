import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createRedis, EVENT_MAX_AGE_MS, userTag, type RedisClient } from '@workspace/platform';
import { newUserId } from '@workspace/testkit';
import { RedisThreadRepo } from '../src/adapters/thread-repo.redis.js';
import { ThreadProjection, type ChatCreated } from '../src/domain/threads.js';

let redis: RedisClient;
let threads: ThreadProjection;
beforeAll(() => {
  redis = createRedis({ url: inject('infra').redisUrl });
  threads = new ThreadProjection(new RedisThreadRepo(redis));
});
afterAll(async () => {
  await redis.quit();
});

const chat = (userId: string, n: number, overrides: Partial<ChatCreated> = {}): ChatCreated => ({
  userId,
  chatId: `cht_${String(n).padStart(32, '0')}`,
  agentId: 'agt_00000000000000000000000000000001',
  projectName: 'Research',
  title: `chat ${n}`,
  createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
  updatedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
  ...overrides,
});

describe('thread projection on Redis', () => {
  it('threads — newest first, per project (case-insensitive), and a repeated event changes nothing', async () => {
    const user = newUserId();
    await threads.chatCreated(chat(user, 1));
    await threads.chatCreated(chat(user, 3, { projectName: 'RESEARCH' }));
    await threads.chatCreated(chat(user, 2));
    await threads.chatCreated(chat(user, 2));
    await threads.chatCreated(chat(user, 4, { projectName: 'Home' }));
    const [research, home, none] = await threads.of(user, ['research', 'Home', 'Other']);
    expect(research!.map((t) => t.title)).toEqual(['chat 3', 'chat 2', 'chat 1']);
    expect(research![0]).toEqual({ threadId: chat(user, 3).chatId, title: 'chat 3', agentId: chat(user, 3).agentId, createdAt: chat(user, 3).createdAt, updatedAt: chat(user, 3).updatedAt });
    expect(home!.map((t) => t.title)).toEqual(['chat 4']);
    expect(none).toEqual([]);
  });

  it('threads — an Agent\'s deletion removes its threads only, is idempotent, and wins over a late creation', async () => {
    const user = newUserId();
    const other = 'agt_00000000000000000000000000000002';
    await threads.chatCreated(chat(user, 1));
    await threads.chatCreated(chat(user, 2, { agentId: other }));
    await threads.agentDeleted(user, chat(user, 1).agentId);
    await threads.agentDeleted(user, chat(user, 1).agentId);
    expect((await threads.of(user, ['Research']))[0]!.map((t) => t.agentId)).toEqual([other]);
    await threads.chatCreated(chat(user, 5)); // arrives after the deletion it predates
    expect((await threads.of(user, ['Research']))[0]!.map((t) => t.agentId)).toEqual([other]);
  });

  it('threads — tombstones expire: they last as long as the event stream keeps events, and the set goes with its newest entry', async () => {
    const user = newUserId();
    await threads.agentDeleted(user, chat(user, 1).agentId);
    const key = `thread-tombstones:${userTag(user)}`;
    expect(await redis.type(key)).toBe('zset');
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(EVENT_MAX_AGE_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(EVENT_MAX_AGE_MS);
    // Once a tombstone has expired (its score is in the past), a creation is taken again and the entry is trimmed by the next deletion.
    await redis.zadd(key, String(Date.now() - 1_000), chat(user, 1).agentId);
    await threads.chatCreated(chat(user, 6));
    expect((await threads.of(user, ['Research']))[0]!.map((t) => t.title)).toEqual(['chat 6']);
    await threads.agentDeleted(user, 'agt_00000000000000000000000000000009');
    expect(await redis.zrange(key, '0', '-1')).toEqual(['agt_00000000000000000000000000000009']);
  });
});
