import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { newUserId } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { triggerOwnerKey, userKeys } from '../src/adapters/keys.js';
import { sign } from '../src/domain/signature.js';
import { harness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(() => {
  h = harness({ url: inject('infra').redisUrl, secretKey: randomBytes(32) });
});
afterAll(async () => {
  await h?.close();
});

function owner() {
  const scope = { userId: newUserId() };
  return { scope, agentId: h.agents.add(scope.userId) };
}

const body = Buffer.from('{"action":"opened","number":7}');

describe('triggers', () => {
  it('triggers — create shows the secret once; list never shows it; Redis holds it sealed', async () => {
    const { scope, agentId } = owner();
    const { trigger, secret } = await h.triggers.create(scope, agentId, 'GitHub');
    expect(trigger).toEqual({ triggerId: expect.stringMatching(/^trg_[0-9a-f]{32}$/), agentId, name: 'GitHub', alias: null, createdAt: expect.any(String) });
    expect(secret).toMatch(/^whsec_/);
    await sleep(2); // another millisecond: creation time orders the list
    const unnamed = await h.triggers.create(scope, agentId);
    expect(unnamed.trigger.name).toBe('');
    const list = await h.triggers.list(scope, agentId);
    expect(list).toEqual([unnamed.trigger, trigger]);
    expect(JSON.stringify(list)).not.toContain(secret);
    const raw = await h.redis.get(userKeys(scope.userId).trigger(trigger.triggerId));
    expect(raw).not.toContain(secret.slice(6));
    expect(raw).toContain('gcm1.');
  });

  it('triggers — a correctly signed body starts a chat as the owner, titled "Webhook: <name>"', async () => {
    const { scope, agentId } = owner();
    const { trigger, secret } = await h.triggers.create(scope, agentId, 'Deploys');
    const fired = await h.triggers.fire(trigger.triggerId, body, sign(secret, body), 'req-1');
    expect(fired.chatId).toMatch(/^cht_/);
    expect(h.agents.chats.filter((c) => c.agentId === agentId)).toEqual([expect.objectContaining({ userId: scope.userId, agentId, title: 'Webhook: Deploys' })]);
  });

  it('triggers — a bad or missing signature is UNAUTHENTICATED and starts nothing', async () => {
    const { scope, agentId } = owner();
    const { trigger, secret } = await h.triggers.create(scope, agentId);
    for (const signature of ['', sign('not-the-secret', body), sign(secret, Buffer.from('other body')), sign(secret, body).replace('sha256=', '')]) {
      await expect(h.triggers.fire(trigger.triggerId, body, signature)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    }
    expect(h.agents.chats.filter((c) => c.agentId === agentId)).toEqual([]);
  });

  it('triggers — an unknown, malformed or deleted trigger is TRIGGER_NOT_FOUND, and a delete removes its lookup key', async () => {
    const { scope, agentId } = owner();
    const { trigger, secret } = await h.triggers.create(scope, agentId);
    await expect(h.triggers.fire('trg_00000000000000000000000000000000', body, sign(secret, body))).rejects.toMatchObject({ code: 'TRIGGER_NOT_FOUND' });
    await expect(h.triggers.fire('../etc', body, '')).rejects.toMatchObject({ code: 'TRIGGER_NOT_FOUND' });
    await expect(h.triggers.delete(scope, h.agents.add(scope.userId), trigger.triggerId)).rejects.toMatchObject({ code: 'TRIGGER_NOT_FOUND' });
    await h.triggers.delete(scope, agentId, trigger.triggerId);
    await expect(h.triggers.fire(trigger.triggerId, body, sign(secret, body))).rejects.toMatchObject({ code: 'TRIGGER_NOT_FOUND' });
    expect(await h.redis.exists(triggerOwnerKey(trigger.triggerId), userKeys(scope.userId).trigger(trigger.triggerId))).toBe(0);
    expect(await h.triggers.list(scope, agentId)).toEqual([]);
  });

  it('triggers — routes under another user\'s Agent are AGENT_NOT_FOUND', async () => {
    const { agentId } = owner();
    const stranger = { userId: newUserId() };
    await expect(h.triggers.create(stranger, agentId)).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
    await expect(h.triggers.list(stranger, agentId)).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
  });

  it('triggers — firing for an Agent deleted before the cascade arrived is TRIGGER_NOT_FOUND', async () => {
    const { scope, agentId } = owner();
    const { trigger, secret } = await h.triggers.create(scope, agentId);
    h.agents.remove(scope.userId, agentId);
    await expect(h.triggers.fire(trigger.triggerId, body, sign(secret, body))).rejects.toMatchObject({ code: 'TRIGGER_NOT_FOUND' });
  });
});
