import { newUserId } from '@workspace/testkit';
import { describe, expect, it } from 'vitest';
import type { AppError } from '@workspace/platform';
import type { AgentRecord } from '../../src/domain/ports.js';
import type { Harness } from './harness.js';

/**
 * The behaviours that must hold on a single Redis and on Redis Cluster alike: the same
 * repository code runs both (every key of a user shares one hash tag).
 */
export function sharedRepoSuite(label: string, h: () => Harness) {
  describe(`agents repository (${label})`, () => {
    it(`agents repo (${label}) — 30 concurrent updates on one base: exactly one new config, 29 stale`, async () => {
      const scope = { userId: newUserId() };
      const { agent } = await h().agents.create(scope, { name: 'Racer' });
      const results = await Promise.allSettled(
        Array.from({ length: 30 }, (_, i) => h().agents.update(scope, agent.agentId, agent.currentConfigId, { goal: `goal ${i}` })),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as AppError);
      expect(won).toHaveLength(1);
      const winner = won[0]!.value;
      expect(lost).toHaveLength(29);
      for (const err of lost) expect(err).toMatchObject({ code: 'STALE_AGENT_CONFIG', details: { currentConfigId: winner.config.configId } });
      const versions = await h().agents.versions(scope, agent.agentId);
      expect(versions.map((v) => v.configId)).toEqual([winner.config.configId, agent.currentConfigId]);
      expect((await h().agents.get(scope, agent.agentId)).agent.currentConfigId).toBe(winner.config.configId);
    });

    it(`agents repo (${label}) — 10 concurrent chats: chatCount 10, each pins the current config`, async () => {
      const scope = { userId: newUserId() };
      const { agent } = await h().agents.create(scope, { name: 'Chatty' });
      const chats = await Promise.all(Array.from({ length: 10 }, (_, i) => h().chats.create(scope, agent.agentId, { title: `chat ${i}` })));
      const after = await h().agents.get(scope, agent.agentId);
      expect(after.agent.chatCount).toBe(10);
      const newest = chats.map((c) => c.createdAt).sort().at(-1);
      expect(after.agent.lastChatAt).toBe(newest);
      expect(new Set(chats.map((c) => c.configId))).toEqual(new Set([agent.currentConfigId]));
      const listed = await h().chats.list(scope, agent.agentId);
      expect(listed).toHaveLength(10);
      const order = listed.map((c) => `${c.createdAt}|${c.chatId}`);
      expect(order).toEqual([...order].sort().reverse());
    });

    it(`agents repo (${label}) — 10 concurrent chats under one idempotency key: one chat, the same to every caller`, async () => {
      const scope = { userId: newUserId() };
      const { agent } = await h().agents.create(scope, { name: 'Once' });
      const chats = await Promise.all(Array.from({ length: 10 }, () => h().chats.create(scope, agent.agentId, { idempotencyKey: 'run-1' })));
      expect(new Set(chats.map((c) => c.chatId)).size).toBe(1);
      expect((await h().agents.get(scope, agent.agentId)).agent.chatCount).toBe(1);
      expect(await h().chats.list(scope, agent.agentId)).toEqual([chats[0]]);
    });

    it(`agents repo (${label}) — chats and updates racing: every chat counted, exactly one update wins`, async () => {
      const scope = { userId: newUserId() };
      const { agent } = await h().agents.create(scope, { name: 'Mixed' });
      const work = [
        ...Array.from({ length: 10 }, () => h().chats.create(scope, agent.agentId)),
        ...Array.from({ length: 10 }, (_, i) => h().agents.update(scope, agent.agentId, agent.currentConfigId, { goal: `g${i}` })),
      ];
      const results = await Promise.allSettled(work);
      expect(results.slice(0, 10).every((r) => r.status === 'fulfilled')).toBe(true);
      expect(results.slice(10).filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect((await h().agents.get(scope, agent.agentId)).agent.chatCount).toBe(10);
    });

    it(`agents repo (${label}) — list pages come from the index in order, q matches normalized text`, async () => {
      const scope = { userId: newUserId() };
      const made: AgentRecord[] = [];
      for (let i = 0; i < 25; i++) {
        made.push((await h().agents.create(scope, { name: `Agent ${i}`, description: i % 5 === 0 ? 'Ｆｉｎｄ  ME' : 'other' })).agent);
      }
      const expected = [...made].sort((a, b) => (a.createdAt === b.createdAt ? (a.agentId < b.agentId ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1)).map((a) => a.agentId);
      const { listAgents } = await import('../../src/domain/agent-list.js');
      const page1 = await listAgents(h().repo, scope, { limit: 10 });
      const page3 = await listAgents(h().repo, scope, { page: 3, limit: 10 });
      expect(page1).toMatchObject({ page: 1, limit: 10, total: 25, pages: 3 });
      expect([...page1.agents, ...(await listAgents(h().repo, scope, { page: 2, limit: 10 })).agents, ...page3.agents].map((a) => a.agentId)).toEqual(expected);
      expect(page3.agents).toHaveLength(5);
      expect((await listAgents(h().repo, scope, { page: 4, limit: 10 })).agents).toEqual([]);
      const found = await listAgents(h().repo, scope, { q: 'find me', limit: 2 });
      expect(found).toMatchObject({ total: 5, pages: 3 });
      const matching = new Set(made.filter((m) => m.summary.searchDescription === 'find me').map((m) => m.agentId));
      expect(found.agents.map((a) => a.agentId)).toEqual(expected.filter((id) => matching.has(id)).slice(0, 2));
      expect((await listAgents(h().repo, scope, { q: 'AGENT 1' })).total).toBe(11);
      expect(await listAgents(h().repo, scope, { q: 'nothing like it' })).toMatchObject({ total: 0, pages: 0, agents: [] });
    });
  });
}
