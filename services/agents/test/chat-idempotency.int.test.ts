import { parseEvent, userTag } from '@workspace/platform';
import { newUserId } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CHAT_KEY_TTL_MS } from '../src/adapters/agent-repo.redis.js';
import { keysOf } from '../src/adapters/keys.js';
import { harness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(() => {
  h = harness({ url: inject('infra').redisUrl });
});
afterAll(async () => {
  await h?.close();
});

async function agentOf(userId: string): Promise<string> {
  return (await h.agents.create({ userId }, { name: 'Scheduled' })).agent.agentId;
}

/** chat.created events queued in the user's outbox. */
async function chatEvents(userId: string) {
  return (await h.outbox.peek(userTag(userId), 1_000)).map((raw) => parseEvent(raw)).filter((e) => e.type === 'chat.created');
}

describe('chat idempotency', () => {
  it('chats — a repeat under the same key returns the first chat: one record, one count, one chat.created', async () => {
    const scope = { userId: newUserId() };
    const agentId = await agentOf(scope.userId);
    const first = await h.chats.create(scope, agentId, { title: 'Scheduled run', idempotencyKey: 'sch_1@1714564800000' });
    const again = await h.chats.create(scope, agentId, { title: 'another title', idempotencyKey: 'sch_1@1714564800000' });
    expect(again).toEqual(first);
    expect((await h.agents.get(scope, agentId)).agent.chatCount).toBe(1);
    expect(await h.chats.list(scope, agentId)).toEqual([first]);
    expect((await chatEvents(scope.userId)).map((e) => e.subject)).toEqual([first.chatId]);
    // The key is kept under the user's hash tag (same slot as the chat), for 7 days.
    const stored = keysOf(scope.userId).chatByKey(agentId, 'sch_1@1714564800000');
    expect(await h.redis.get(stored)).toBe(first.chatId);
    const ttl = await h.redis.pttl(stored);
    expect(ttl).toBeGreaterThan(CHAT_KEY_TTL_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(CHAT_KEY_TTL_MS);
    expect(CHAT_KEY_TTL_MS).toBe(7 * 24 * 3600_000);
  });

  it('chats — other keys, no key, another Agent or another user: a chat each', async () => {
    const alice = { userId: newUserId() };
    const bob = { userId: newUserId() };
    const [a1, a2, b1] = [await agentOf(alice.userId), await agentOf(alice.userId), await agentOf(bob.userId)];
    const made = [
      await h.chats.create(alice, a1, { idempotencyKey: 'k' }),
      await h.chats.create(alice, a1, { idempotencyKey: 'k2' }),
      await h.chats.create(alice, a1),
      await h.chats.create(alice, a1),
      await h.chats.create(alice, a2, { idempotencyKey: 'k' }),
      await h.chats.create(bob, b1, { idempotencyKey: 'k' }),
    ];
    expect(new Set(made.map((c) => c.chatId)).size).toBe(6);
    expect((await h.agents.get(alice, a1)).agent.chatCount).toBe(4);
    // Bob's Agent is not found for Alice, key or not.
    await expect(h.chats.create(alice, b1, { idempotencyKey: 'k' })).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
  });

  it('chats — a repeat after the Agent is deleted is AGENT_NOT_FOUND, not the old chat', async () => {
    const scope = { userId: newUserId() };
    const agentId = await agentOf(scope.userId);
    await h.chats.create(scope, agentId, { idempotencyKey: 'run' });
    await h.agents.delete(scope, agentId);
    await expect(h.chats.create(scope, agentId, { idempotencyKey: 'run' })).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
  });

  it('chats — a key must be 1–200 characters (code points)', async () => {
    const scope = { userId: newUserId() };
    const agentId = await agentOf(scope.userId);
    for (const bad of ['', 'x'.repeat(201), '🙂'.repeat(201)]) {
      await expect(h.chats.create(scope, agentId, { idempotencyKey: bad })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'idempotencyKey' } });
    }
    const long = await h.chats.create(scope, agentId, { idempotencyKey: '🙂'.repeat(200) });
    expect(await h.chats.create(scope, agentId, { idempotencyKey: '🙂'.repeat(200) })).toEqual(long);
    expect((await h.agents.get(scope, agentId)).agent.chatCount).toBe(1);
  });
});
