import { setTimeout as sleep } from 'node:timers/promises';
import { createRedis, userTag, type RedisClient } from '@workspace/platform';
import { newUserId } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MAX_SESSIONS_PER_USER, SESSION_TTL_S, SessionStore } from '../src/features/mcp/sessions.redis.js';

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
    await store.end(session);
    expect(await store.get(session.id, owner)).toBeUndefined();
    // Ending it removed every key; asking for it again created none.
    expect(await ttls(session.id)).toEqual([-2, -2, -2, -2]);
  });

  const open = (store: SessionStore, userId: string) => store.create({ userId, protocolVersion: '2025-06-18', clientInfo: { name: 'test', version: '1' }, capabilities: {} });
  const setOf = (userId: string) => `mcp:${userTag(userId)}:sessions`;

  it(`mcp sessions — a user holds at most ${MAX_SESSIONS_PER_USER}: one more ends the least recently used (every key of it), never one in use; DELETE and expiry leave the count`, async () => {
    // Two replicas' stores: the second has not seen the sessions yet, so its reads move them to the front.
    const replicaA = new SessionStore(redis);
    const replicaB = new SessionStore(redis);
    const owner = newUserId();
    const sessions = [];
    for (let i = 0; i < MAX_SESSIONS_PER_USER; i++) sessions.push(await open(replicaA, owner));
    const [idle, ...used] = sessions;
    await replicaA.subscribe(idle!.id, '/files/a');
    await replicaA.initCursor(idle!.id, 'cursor-1');
    await sleep(5);
    for (const s of used) expect(await replicaB.get(s.id, owner)).toEqual(s);
    expect(await redis.zcard(setOf(owner))).toBe(MAX_SESSIONS_PER_USER);

    // Another user's sessions count for them alone.
    const other = newUserId();
    const theirs = await open(replicaA, other);

    const newest = await open(replicaA, owner);
    expect(await replicaA.get(idle!.id, owner)).toBeUndefined();
    expect(await ttls(idle!.id)).toEqual([-2, -2, -2, -2]);
    for (const s of [...used, newest]) expect(await replicaA.get(s.id, owner), s.id).toEqual(s);
    expect(await redis.zcard(setOf(owner))).toBe(MAX_SESSIONS_PER_USER);
    expect(await replicaA.get(theirs.id, other)).toEqual(theirs);

    // An ended session leaves room: the next one ends nobody.
    await replicaA.end(used[0]!);
    const another = await open(replicaB, owner);
    for (const s of [...used.slice(1), newest, another]) expect(await replicaB.get(s.id, owner), s.id).toEqual(s);

    // The id of a session that expired a day ago is forgotten when the next one opens.
    await redis.zadd(setOf(other), Date.now() - (SESSION_TTL_S + 3600) * 1000, 'f'.repeat(32));
    const later = await open(replicaA, other);
    expect(await redis.zscore(setOf(other), 'f'.repeat(32))).toBeNull();
    expect(await redis.ttl(setOf(owner))).toBeGreaterThan(SESSION_TTL_S - 60);
    for (const s of [...used.slice(1), newest, another, theirs, later]) await replicaA.end(s);
    await redis.del(setOf(owner), setOf(other));
  });
});
