import { createHash, randomUUID } from 'node:crypto';
import { createRedis, userTag, type RedisClient } from '@workspace/platform';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { put } from './support/files-api.js';
import { sharedStack, type ApiResponse, type ApiUser, type SharedStack } from './support/stack.js';

let stack: SharedStack;
let redis: RedisClient;
beforeAll(async () => {
  stack = sharedStack();
  const infra = inject('infra');
  redis = createRedis({ url: infra.redisUrl, cluster: infra.redisCluster ?? false, name: 'idempotency-e2e' });
});
afterAll(async () => {
  await redis?.quit();
});

const newKey = () => `key-${randomUUID()}`;
const post = (u: ApiUser, path: string, body: unknown, key: string) => u.request('POST', path, body, { 'idempotency-key': key });

/** The gateway's record of a key, as docs/api/conventions.md#idempotency says (24 h, per user). */
const recordKey = (u: ApiUser, key: string) => `gateway:idempotency:${userTag(u.sub)}:${createHash('sha256').update(key).digest('hex')}`;

function expectReplay(first: ApiResponse, again: ApiResponse): void {
  expect(again.status).toBe(first.status);
  expect(again.body).toEqual(first.body);
  for (const header of ['location', 'etag', 'content-type']) expect(again.headers.get(header), header).toBe(first.headers.get(header));
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  expect(again.headers.get('idempotent-replayed')).toBe('true');
}

describe('Idempotency-Key', () => {
  it('idempotency — a repeated Agent create returns the first status, body, Location and ETag and makes one Agent', async () => {
    const u = await stack.user();
    const key = newKey();
    const first = await post(u, '/v1/agents', { name: 'Once' }, key);
    expect(first.status).toBe(201);
    const again = await post(u, '/v1/agents', { name: 'Once' }, key);
    expectReplay(first, again);
    expect((await u.request('GET', '/v1/agents')).body.pagination.total).toBe(1);
    // Kept for 24 hours.
    const ttl = await redis.pttl(recordKey(u, key));
    expect(ttl).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(ttl).toBeLessThanOrEqual(24 * 3600_000);
  });

  it('idempotency — every creating POST replays: projects, chats, schedules, triggers, webhooks, copies; one resource each', async () => {
    const u = await stack.user();
    const agentId = (await u.request('POST', '/v1/agents', { name: 'Parent' })).body.agentId as string;
    await put(stack, u, '/files/source.txt', 'bytes');
    const cases: { path: string; body: unknown; count: () => Promise<number> }[] = [
      { path: '/v1/agent/projects', body: { name: 'Replayed' }, count: async () => (await u.request('GET', '/v1/agent/projects')).body.projects.filter((p: { name: string }) => p.name === 'Replayed').length },
      { path: `/v1/agents/${agentId}/chats`, body: { title: 'Hello' }, count: async () => (await u.request('GET', `/v1/agents/${agentId}/chats`)).body.chats.length },
      { path: `/v1/agents/${agentId}/schedules`, body: { cron: '0 9 * * *' }, count: async () => (await u.request('GET', `/v1/agents/${agentId}/schedules`)).body.schedules.length },
      { path: `/v1/agents/${agentId}/triggers`, body: { name: 'gh' }, count: async () => (await u.request('GET', `/v1/agents/${agentId}/triggers`)).body.triggers.length },
      { path: '/v1/webhooks', body: { url: 'http://127.0.0.1:9/replayed', events: ['*'] }, count: async () => (await u.request('GET', '/v1/webhooks')).body.webhooks.length },
      // onConflict=uuid: a second copy would land beside the first under a new name.
      { path: '/v1/agent/files/copy', body: { from: '/files/source.txt', to: '/files/copy.txt', onConflict: 'uuid' }, count: async () => (await u.request('GET', '/v1/agent/files?path=/files')).body.entries.filter((e: { name: string }) => e.name.startsWith('copy')).length },
    ];
    for (const c of cases) {
      const key = newKey();
      const first = await post(u, c.path, c.body, key);
      expect(first.status, `${c.path}: ${first.text}`).toBeLessThan(300);
      expectReplay(first, await post(u, c.path, c.body, key));
      expect(await c.count(), c.path).toBe(1);
    }
  });

  it('idempotency — concurrent duplicates wait for the first answer: one Agent, one answer for all', async () => {
    const u = await stack.user();
    const key = newKey();
    const results = await Promise.all(Array.from({ length: 10 }, () => post(u, '/v1/agents', { name: 'Racer', description: 'x'.repeat(1000) }, key)));
    expect(new Set(results.map((r) => r.status))).toEqual(new Set([201]));
    expect(new Set(results.map((r) => r.body.agentId)).size).toBe(1);
    expect(results.filter((r) => r.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect((await u.request('GET', '/v1/agents')).body.pagination.total).toBe(1);
  });

  it('idempotency — the same key with another body or path → 422 IDEMPOTENCY_KEY_REUSED; keys are per user', async () => {
    const u = await stack.user();
    const key = newKey();
    expect((await post(u, '/v1/agents', { name: 'A' }, key)).status).toBe(201);
    for (const [path, body] of [['/v1/agents', { name: 'B' }], ['/v1/agent/projects', { name: 'A' }]] as const) {
      const reused = await post(u, path, body, key);
      expect(reused.status).toBe(422);
      expect(reused.body.error).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', requestId: reused.headers.get('x-request-id') });
    }
    const other = await stack.user();
    const theirs = await post(other, '/v1/agents', { name: 'B' }, key);
    expect(theirs.status).toBe(201);
    expect((await u.request('GET', '/v1/agents')).body.pagination.total).toBe(1);
  });

  it('idempotency — a key must be 1–255 printable ASCII characters (else 400 naming the header); none means no idempotency', async () => {
    const u = await stack.user();
    for (const bad of ['', 'x'.repeat(256), 'clé']) {
      const res = await post(u, '/v1/agents', { name: 'Bad key' }, bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'Idempotency-Key' } });
    }
    expect((await post(u, '/v1/agents', { name: 'Long key' }, '~'.repeat(255))).status).toBe(201);
    await u.request('POST', '/v1/agents', { name: 'Plain' });
    await u.request('POST', '/v1/agents', { name: 'Plain' });
    expect((await u.request('GET', '/v1/agents')).body.pagination.total).toBe(3);
  });

  it('idempotency — an error answer (4xx) is replayed too, with the request id of the repeat', async () => {
    const u = await stack.user();
    const key = newKey();
    const missing = '/v1/agents/agt_00000000000000000000000000000000/chats';
    const first = await post(u, missing, { title: 'x' }, key);
    expect(first.status).toBe(404);
    const again = await post(u, missing, { title: 'x' }, key);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('AGENT_NOT_FOUND');
    expect(again.body.error.requestId).toBe(again.headers.get('x-request-id'));
    expect(again.body.error.requestId).not.toBe(first.body.error.requestId);
  });

  it('idempotency — a 5xx answer is not kept: the retry runs again and creates', async () => {
    // A gateway whose agents service is unreachable answers the create with 503.
    const cut = await stack.extraGateway({ AGENTS_ADDR: '127.0.0.1:1' });
    try {
      const u = await stack.user();
      const key = newKey();
      const failed = await fetch(`${cut.url}/v1/agents`, { method: 'POST', headers: { authorization: `Bearer ${u.token}`, 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ name: 'Retry me' }) });
      expect(failed.status).toBe(503);
      await expect.poll(() => redis.exists(recordKey(u, key))).toBe(0);
      const retried = await post(u, '/v1/agents', { name: 'Retry me' }, key);
      expect(retried.status).toBe(201);
      expect(retried.headers.get('idempotent-replayed')).toBeNull();
    } finally {
      await cut.stop();
    }
  });

  it('idempotency — a create retried after a lost answer (the gateway kept nothing) still makes one Agent and one chat', async () => {
    const u = await stack.user();
    const [agentKey, chatKey] = [newKey(), newKey()];
    const agent = await post(u, '/v1/agents', { name: 'Lost answer' }, agentKey);
    const chat = await post(u, `/v1/agents/${agent.body.agentId}/chats`, { title: 'Lost' }, chatKey);
    // As after a 503 whose create landed anyway: the gateway's records are gone, the services' are not.
    await redis.del(recordKey(u, agentKey));
    await redis.del(recordKey(u, chatKey));
    const agentAgain = await post(u, '/v1/agents', { name: 'Lost answer' }, agentKey);
    const chatAgain = await post(u, `/v1/agents/${agent.body.agentId}/chats`, { title: 'Lost' }, chatKey);
    expect(agentAgain.headers.get('idempotent-replayed')).toBeNull();
    expect(agentAgain.body.agentId).toBe(agent.body.agentId);
    expect(chatAgain.body.chatId).toBe(chat.body.chatId);
    expect((await u.request('GET', '/v1/agents')).body.pagination.total).toBe(1);
    expect((await u.request('GET', `/v1/agents/${agent.body.agentId}/chats`)).body.chats).toHaveLength(1);
  });

  it('idempotency — the OpenAPI document declares the header and the 422 on creating POSTs only', async () => {
    const doc = (await fetch(`${stack.url}/openapi.json`).then((r) => r.json())) as { paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; responses: Record<string, unknown> }>> };
    const declares = (path: string, method: string) => (doc.paths[path]![method]!.parameters ?? []).some((p) => p.name === 'Idempotency-Key' && p.in === 'header');
    for (const [path, method] of [['/v1/agents', 'post'], ['/v1/agent/projects', 'post'], ['/v1/agents/{agentId}/chats', 'post'], ['/v1/agents/{agentId}/schedules', 'post'], ['/v1/agents/{agentId}/triggers', 'post'], ['/v1/webhooks', 'post'], ['/v1/agent/files/copy', 'post']]) {
      expect(declares(path!, method!), `${method} ${path}`).toBe(true);
      expect(doc.paths[path!]![method!]!.responses['422'], `${method} ${path}`).toBeDefined();
    }
    expect(declares('/v1/agent/files/move', 'post')).toBe(false);
    expect(declares('/v1/agents/{agentId}', 'patch')).toBe(false);
  });
});
