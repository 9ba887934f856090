import { newUserId } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEvent, userTag } from '@workspace/platform';
import { harness, type Harness } from './support/harness.js';
import { sharedRepoSuite } from './support/shared-suite.js';

let h: Harness;
let small: Harness;
beforeAll(() => {
  h = harness({ url: inject('infra').redisUrl });
  small = harness({ url: inject('infra').redisUrl, retention: 3 });
});
afterAll(async () => {
  await h?.close();
  await small?.close();
});

sharedRepoSuite('single node', () => h);

describe('agents repository (single node)', () => {
  it('agents repo — retention keeps the newest and every pinned config, deletes the rest in the same write', async () => {
    const scope = { userId: newUserId() };
    const { agent, config: first } = await small.agents.create(scope, { name: 'Keeper' });
    const pinnedChat = await small.chats.create(scope, agent.agentId, { title: 'pins the first config' });
    let base = agent.currentConfigId;
    const made = [first.configId];
    for (let i = 1; i <= 6; i++) {
      const next = await small.agents.update(scope, agent.agentId, base, { goal: `v${i}` });
      base = next.config.configId;
      made.push(base);
    }
    const versions = (await small.agents.versions(scope, agent.agentId)).map((v) => v.configId);
    // Retention 3, one of them pinned: the pinned first config and the two newest stay.
    expect(versions).toEqual([made[6], made[5], made[0]]);
    for (const gone of made.slice(1, 5)) expect(await small.repo.getConfig(scope.userId, gone)).toBeUndefined();
    const chat = await small.chats.get(scope, agent.agentId, pinnedChat.chatId);
    expect(chat.config).toEqual(first);
  });

  it('agents repo — restoring earlier fields gives a new config with the earlier digest', async () => {
    const scope = { userId: newUserId() };
    const { agent, config: v1 } = await h.agents.create(scope, { name: 'Restorer', goal: 'one', skills: ['a'] });
    const v2 = await h.agents.update(scope, agent.agentId, v1.configId, { goal: 'two', skills: null });
    expect(v2.config.contentDigest).not.toBe(v1.contentDigest);
    const v3 = await h.agents.update(scope, agent.agentId, v2.config.configId, { goal: v1.goal, skills: v1.skills });
    expect(v3.config.configId).not.toBe(v1.configId);
    expect(v3.config.contentDigest).toBe(v1.contentDigest);
  });

  it('agents repo — an unchanged update returns the current config whatever the base says', async () => {
    const scope = { userId: newUserId() };
    const { agent, config } = await h.agents.create(scope, { name: 'Same', projectName: 'research' });
    expect(config.projectName).toBe('Research');
    const same = await h.agents.update(scope, agent.agentId, 'cfg_stale', { name: ' Same ', projectName: 'RESEARCH' });
    expect(same.config).toEqual(config);
    await expect(h.agents.update(scope, agent.agentId, 'cfg_stale', { goal: 'x' })).rejects.toMatchObject({ code: 'STALE_AGENT_CONFIG', details: { currentConfigId: config.configId } });
    await expect(h.agents.update(scope, agent.agentId, config.configId, { projectName: 'old' })).rejects.toMatchObject({ code: 'PROJECT_ARCHIVED' });
    await expect(h.agents.update(scope, agent.agentId, config.configId, { projectName: 'nope' })).rejects.toMatchObject({ code: 'PROJECT_NOT_FOUND' });
  });

  it('agents repo — delete removes every key of the Agent and queues agent.deleted in the same write', async () => {
    const scope = { userId: newUserId() };
    const { agent } = await h.agents.create(scope, { name: 'Doomed' });
    await h.chats.create(scope, agent.agentId);
    await h.agents.update(scope, agent.agentId, agent.currentConfigId, { goal: 'x' });
    const tag = userTag(scope.userId);
    await h.redis.del(h.outbox.listKey(tag));
    await h.agents.delete(scope, agent.agentId);
    const left = await h.redis.keys(`agents:${tag}:*`);
    expect(left.filter((k) => !k.endsWith(':index'))).toEqual([]);
    expect(await h.redis.zcard(`agents:${tag}:index`)).toBe(0);
    const queued = (await h.outbox.peek(tag, 10)).map((raw) => parseEvent(raw));
    expect(queued).toEqual([
      expect.objectContaining({ specversion: '1.0', type: 'agent.deleted', subject: agent.agentId, data: { userId: scope.userId, agentId: agent.agentId } }),
    ]);
    await expect(h.agents.get(scope, agent.agentId)).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
    await expect(h.agents.delete(scope, agent.agentId)).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
    await expect(h.chats.create(scope, agent.agentId)).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
  });

  it('agents repo — another user sees nothing', async () => {
    const alice = { userId: newUserId() };
    const bob = { userId: newUserId() };
    const { agent } = await h.agents.create(alice, { name: 'Private' });
    await expect(h.agents.get(bob, agent.agentId)).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
    await expect(h.agents.update(bob, agent.agentId, agent.currentConfigId, { goal: 'x' })).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
    await expect(h.agents.delete(bob, agent.agentId)).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
  });
});
