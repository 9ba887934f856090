import { parseEvent, userTag } from '@workspace/platform';
import { newUserId } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AGENT_KEY_TTL_MS } from '../src/adapters/agent-repo.redis.js';
import { keysOf } from '../src/adapters/keys.js';
import { Agents } from '../src/domain/agents.js';
import { fixedKnowledge, fixedProjects, harness, type Harness } from './support/harness.js';

let h: Harness;
let limited: Agents;
const MAX = 5;
beforeAll(() => {
  h = harness({ url: inject('infra').redisUrl, cluster: inject('infra').redisCluster ?? false });
  limited = new Agents({ repo: h.repo, projects: fixedProjects, knowledge: fixedKnowledge, retention: 100, maxAgents: MAX });
});
afterAll(async () => {
  await h?.close();
});

async function createdEvents(userId: string) {
  return (await h.outbox.peek(userTag(userId), 1_000)).map((raw) => parseEvent(raw)).filter((e) => e.type === 'agent.created');
}

describe('agent create', () => {
  it('quotas — 20 concurrent creates with MAX_AGENTS 5: exactly 5 Agents and 5 events; the rest 403 with the figures', async () => {
    const scope = { userId: newUserId() };
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => limited.create(scope, { name: `Agent ${i}` })));
    const created = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.agent.agentId] : []));
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    expect(created).toHaveLength(MAX);
    expect(refused).toHaveLength(20 - MAX);
    for (const err of refused) expect(err).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'MAX_AGENTS', limit: String(MAX), used: String(MAX) } });
    const page = await h.repo.page(scope.userId, 0, 100);
    expect(page.total).toBe(MAX);
    expect(page.agents.map((a) => a.agentId).sort()).toEqual([...created].sort());
    expect((await createdEvents(scope.userId)).map((e) => e.subject).sort()).toEqual([...created].sort());
    // A delete frees a place; another user is not counted against this one.
    await limited.delete(scope, created[0]!);
    await expect(limited.create(scope, { name: 'Again' })).resolves.toBeDefined();
    await expect(limited.create({ userId: newUserId() }, { name: 'Other' })).resolves.toBeDefined();
  });

  it('idempotency — concurrent creates under one key make one Agent and one event; all get it', async () => {
    const scope = { userId: newUserId() };
    const views = await Promise.all(Array.from({ length: 10 }, () => h.agents.create(scope, { name: 'Once' }, { idempotencyKey: 'http:k1' })));
    const ids = new Set(views.map((v) => v.agent.agentId));
    expect(ids.size).toBe(1);
    const [agentId] = [...ids];
    expect((await h.repo.page(scope.userId, 0, 100)).total).toBe(1);
    expect((await createdEvents(scope.userId)).map((e) => e.subject)).toEqual([agentId]);
    expect(views.every((v) => v.config.configId === views[0]!.config.configId)).toBe(true);
    const stored = keysOf(scope.userId).agentByKey('http:k1');
    expect(await h.redis.get(stored)).toBe(agentId);
    expect(await h.redis.pttl(stored)).toBeGreaterThan(AGENT_KEY_TTL_MS - 60_000);
    // Another key (or none) is another Agent.
    const other = await h.agents.create(scope, { name: 'Once' }, { idempotencyKey: 'http:k2' });
    expect(other.agent.agentId).not.toBe(agentId);
  });

  it('idempotency — a key whose Agent was deleted makes a new one; a key of an existing Agent wins over the quota', async () => {
    const scope = { userId: newUserId() };
    const first = await limited.create(scope, { name: 'Gone soon' }, { idempotencyKey: 'http:gone' });
    await limited.delete(scope, first.agent.agentId);
    const second = await limited.create(scope, { name: 'Gone soon' }, { idempotencyKey: 'http:gone' });
    expect(second.agent.agentId).not.toBe(first.agent.agentId);
    await Promise.all(Array.from({ length: MAX - 1 }, (_, i) => limited.create(scope, { name: `Filler ${i}` })));
    await expect(limited.create(scope, { name: 'One more' })).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED' });
    await expect(limited.create(scope, { name: 'Gone soon' }, { idempotencyKey: 'http:gone' })).resolves.toMatchObject({ agent: { agentId: second.agent.agentId } });
  });

  it('idempotency — a key is 1–200 characters', async () => {
    const scope = { userId: newUserId() };
    for (const bad of ['', 'x'.repeat(201), '\ud800']) {
      await expect(h.agents.create(scope, { name: 'x' }, { idempotencyKey: bad })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'idempotencyKey' } });
    }
  });
});
