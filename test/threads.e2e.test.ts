import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvents } from '@workspace/platform';
import { restartService } from '@workspace/testkit';
import { startStack, type Stack } from './support/stack.js';
import { testNats } from './support/backends.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const FIVE_SECONDS = { timeout: 5_000, interval: 100 };

async function threadsOf(u: Awaited<ReturnType<Stack['user']>>, name: string) {
  const list = await u.request('GET', '/v1/agent/projects?includeArchived=true');
  return list.body.projects.find((p: { name: string }) => p.name === name)?.threads as { threadId: string; title: string; agentId: string }[];
}

describe('project threads', () => {
  it('threads — a chat of an Agent bound to a project appears in its threads, newest first, and goes with the Agent', async () => {
    const u = await stack.user();
    expect((await u.request('POST', '/v1/agent/projects', { name: 'Research' })).status).toBe(201);
    const agent = (await u.request('POST', '/v1/agents', { name: 'Scout', projectName: 'research' })).body;
    const other = (await u.request('POST', '/v1/agents', { name: 'Other', projectName: 'Research' })).body;
    const first = (await u.request('POST', `/v1/agents/${agent.agentId}/chats`, { title: 'first' })).body;
    const second = (await u.request('POST', `/v1/agents/${agent.agentId}/chats`, { title: 'second' })).body;
    const kept = (await u.request('POST', `/v1/agents/${other.agentId}/chats`, { title: 'kept' })).body;
    await expect.poll(async () => (await threadsOf(u, 'Research'))?.map((t) => t.title), FIVE_SECONDS).toEqual(['kept', 'second', 'first']);
    const [thread] = await threadsOf(u, 'Research');
    expect(thread).toEqual({ threadId: kept.chatId, title: 'kept', agentId: other.agentId, createdAt: kept.createdAt, updatedAt: kept.updatedAt });
    expect((await threadsOf(u, 'Home'))).toEqual([]);
    const patched = await u.request('PATCH', '/v1/agent/projects', { name: 'Research', goal: 'g' });
    expect(patched.body.threads.map((t: { threadId: string }) => t.threadId)).toEqual([kept.chatId, second.chatId, first.chatId]);

    expect((await u.request('DELETE', `/v1/agents/${agent.agentId}`)).status).toBe(204);
    await expect.poll(async () => (await threadsOf(u, 'Research')).map((t) => t.title), FIVE_SECONDS).toEqual(['kept']);
  });

  it('threads — a projects service that was down when chats were made catches up when it starts', async () => {
    const u = await stack.user();
    const agent = (await u.request('POST', '/v1/agents', { name: 'Later' })).body;
    const projects = stack.services.projects!;
    await projects.stop();
    try {
      expect((await u.request('POST', `/v1/agents/${agent.agentId}/chats`, { title: 'while down' })).status).toBe(201);
    } finally {
      stack.services.projects = await restartService(projects);
    }
    await expect.poll(async () => (await threadsOf(u, 'Home'))?.map((t) => t.title), { timeout: 10_000, interval: 200 }).toEqual(['while down']);
  });

  it('events — creating and changing a project publishes project.created and project.updated for its user', async () => {
    const u = await stack.user();
    const since = new Date(Date.now() - 1_000);
    await u.request('POST', '/v1/agent/projects', { name: 'Published' });
    await u.request('PATCH', '/v1/agent/projects', { name: 'published', goal: 'new' });
    const nats = await testNats();
    try {
      const mine = async () =>
        [...(await readEvents(nats, { subject: 'projects.created', since })), ...(await readEvents(nats, { subject: 'projects.updated', since }))]
          .filter((e) => e.data.userId === u.sub)
          .map((e) => `${e.type} ${e.subject}`)
          .sort();
      await expect.poll(mine, FIVE_SECONDS).toEqual(['project.created Home', 'project.created Published', 'project.updated Published']);
      const [event] = (await readEvents(nats, { subject: 'projects.created', since })).filter((e) => e.data.userId === u.sub);
      expect(event).toMatchObject({ specversion: '1.0', source: '/workspace/projects', id: expect.any(String), time: expect.any(String) });
    } finally {
      await nats.close();
    }
  });
});
