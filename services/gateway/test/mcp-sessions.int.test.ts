import { createRedis, type RedisClient } from '@workspace/platform';
import { newUserId } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SESSION_TTL_S, SessionStore } from '../src/features/mcp/sessions.redis.js';

let redis: RedisClient;
beforeAll(() => {
  redis = createRedis({ url: inject('infra').redisUrl, cluster: inject('infra').redisCluster ?? false, name: 'gateway-mcp-sessions-test' });
});
afterAll(async () => {
  await redis?.quit();
});

const PARTS = ['session', 'subs', 'cursor', 'stream'] as const;
const ttls = (id: string) => Promise.all(PARTS.map((p) => redis.ttl(`mcp:{${id}}:${p}`)));

describe('mcp sessions', () => {
  it('mcp sessions — a request renews the session and its subscriptions, cursor and stream; another user, an ended or a malformed id get nothing', async () => {
    const store = new SessionStore(redis);
    const owner = newUserId();
    const session = await store.create({ userId: owner, protocolVersion: '2025-06-18', clientInfo: { name: 'test', version: '1' }, capabilities: {} });
    await store.subscribe(session.id, '/files/a');
    await store.initCursor(session.id, 'cursor-1');
    await store.claimStream(session.id, 'stream-1');
    // An hour of a day left on each key: a request starts the day again, for all four.
    await Promise.all(PARTS.map((p) => redis.expire(`mcp:{${session.id}}:${p}`, 3600)));

    expect(await store.get(session.id, owner)).toEqual(session);
    for (const ttl of await ttls(session.id)) expect(ttl).toBeGreaterThan(SESSION_TTL_S - 60);

    expect(await store.get(session.id, newUserId())).toBeUndefined();
    expect(await store.get('not-a-session-id', owner)).toBeUndefined();
    expect(await store.subscriptions(session.id)).toEqual(['/files/a']);
    await store.end(session.id);
    expect(await store.get(session.id, owner)).toBeUndefined();
    // Ending it removed every key; asking for it again created none.
    expect(await ttls(session.id)).toEqual([-2, -2, -2, -2]);
  });
});
