import { newUserId } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RedisAgentRepo } from '../src/adapters/agent-repo.redis.js';
import { keysOf } from '../src/adapters/keys.js';
import { Agents } from '../src/domain/agents.js';
import { Chats } from '../src/domain/chats.js';
import type { AgentConfig } from '../src/domain/ports.js';
import { fixedKnowledge, fixedProjects, harness, type Harness } from './support/harness.js';

/**
 * The real repository, with one seam: a step that runs just before the next config read, so
 * a test can put a DELETE exactly between reading an Agent and reading its config.
 */
class RacingRepo extends RedisAgentRepo {
  beforeNextConfigRead: (() => Promise<unknown>) | undefined;

  override async getConfig(userId: string, configId: string): Promise<AgentConfig | undefined> {
    const step = this.beforeNextConfigRead;
    this.beforeNextConfigRead = undefined;
    await step?.();
    return super.getConfig(userId, configId);
  }
}

let h: Harness;
let repo: RacingRepo;
let agents: Agents;
let chats: Chats;
beforeAll(() => {
  h = harness({ url: inject('infra').redisUrl });
  repo = new RacingRepo({ redis: h.redis, outbox: h.outbox });
  agents = new Agents({ repo, projects: fixedProjects, knowledge: fixedKnowledge, retention: 100 });
  chats = new Chats({ repo, agents });
});
afterAll(async () => {
  await repo?.close();
  await h?.close();
});

describe('agents — reads racing a DELETE', () => {
  it('agents race — a GET whose config read comes after the DELETE is AGENT_NOT_FOUND, not INTERNAL', async () => {
    const scope = { userId: newUserId() };
    const { agent } = await agents.create(scope, { name: 'Doomed' });
    repo.beforeNextConfigRead = () => agents.delete(scope, agent.agentId);
    await expect(agents.get(scope, agent.agentId)).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
  });

  it('agents race — a PATCH whose config read comes after the DELETE is AGENT_NOT_FOUND', async () => {
    const scope = { userId: newUserId() };
    const { agent } = await agents.create(scope, { name: 'Doomed' });
    repo.beforeNextConfigRead = () => agents.delete(scope, agent.agentId);
    await expect(agents.update(scope, agent.agentId, agent.currentConfigId, { goal: 'too late' })).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
  });

  it('agents race — a chat read whose pinned config went with the Agent is AGENT_NOT_FOUND', async () => {
    const scope = { userId: newUserId() };
    const { agent } = await agents.create(scope, { name: 'Doomed' });
    const chat = await chats.create(scope, agent.agentId);
    repo.beforeNextConfigRead = () => agents.delete(scope, agent.agentId);
    await expect(chats.get(scope, agent.agentId, chat.chatId)).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
  });

  it('agents race — a current config missing while its Agent stays is still a broken invariant (INTERNAL)', async () => {
    const scope = { userId: newUserId() };
    const { agent } = await agents.create(scope, { name: 'Broken' });
    await h.redis.del(keysOf(scope.userId).config(agent.currentConfigId));
    await expect(agents.get(scope, agent.agentId)).rejects.toMatchObject({ code: 'INTERNAL' });
  });
});
