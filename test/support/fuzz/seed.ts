import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { mintToken } from '@workspace/testkit';
import { upload } from '../files.js';
import type { ApiUser, Stack } from '../stack.js';
import type { Credentials } from './build.js';
import { FUZZ_ALIAS, type Owned, type Victim } from './world.js';

async function ok(promise: Promise<{ status: number; body: any; text: string }>, status = 201): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON of any route
  const res = await promise;
  expect(res.status, res.text).toBe(status);
  return res.body;
}

/**
 * Where the fuzzer's webhooks point: the discard port on loopback (listed in the test stacks'
 * WEBHOOK_ALLOWED_HOSTS), so their deliveries fail at once and reach no one.
 */
export const FUZZ_WEBHOOK_URL = 'http://127.0.0.1:9/fz';

/** Two Agents with chats, a schedule and a trigger each, in the given project. */
async function seedAgents(user: ApiUser, o: { names: string[]; projectName: string; knowledge: string; chatTitle: string; triggerName: string; text: string }, into: Owned) {
  for (const name of o.names) {
    const agent = await ok(user.request('POST', '/v1/agents', { name, description: `${o.text}-description`, instructions: `${o.text}-instructions`, projectName: o.projectName, knowledgeFiles: [{ path: o.knowledge }], conversationStarters: [`${o.text}-starter`] }));
    // A second version (so versions have a parent to diff against) and an alias naming it.
    const patched = await ok(user.request('PATCH', `/v1/agents/${agent.agentId}`, { baseConfigId: agent.currentConfigId, goal: `${o.text}-goal`, changeNote: `${o.text}-note` }), 200);
    await ok(user.request('PUT', `/v1/agents/${agent.agentId}/aliases/${FUZZ_ALIAS}`, { configId: patched.currentConfigId }));
    into.agents.push({ agentId: agent.agentId, configId: patched.currentConfigId });
    const chat = await ok(user.request('POST', `/v1/agents/${agent.agentId}/chats`, { title: o.chatTitle }));
    into.chats.push({ agentId: agent.agentId, id: chat.chatId });
    const schedule = await ok(user.request('POST', `/v1/agents/${agent.agentId}/schedules`, { cron: '0 0 1 1 *', timezone: 'UTC' }));
    into.schedules.push({ agentId: agent.agentId, id: schedule.scheduleId });
    const trigger = await ok(user.request('POST', `/v1/agents/${agent.agentId}/triggers`, { name: o.triggerName }));
    into.triggers.push({ agentId: agent.agentId, id: trigger.triggerId, secret: trigger.secret });
  }
}

/**
 * The other user: a project, files, Agents, chats, a schedule and a trigger, every text a
 * marker no request of the fuzzing user contains, every id recorded.
 */
export async function seedVictim(stack: Stack): Promise<Victim> {
  const user = await stack.user();
  const tag = `zq${randomBytes(6).toString('hex')}`;
  const project = `Leak${tag}Proj`;
  const owned: Owned = { agents: [], chats: [], schedules: [], triggers: [], files: [], projects: [project], webhooks: [] };
  const before = await ok(user.request('GET', '/v1/agent/files/changes/cursor'), 200);
  await ok(user.request('POST', '/v1/agent/projects', { name: project, goal: `${tag}-goal`, instructions: `${tag}-instructions` }));
  for (const [path, content] of [
    [`/files/projects/${project}/${tag}-secret.md`, `${tag}-content`],
    [`/files/${tag}-home.txt`, `${tag}-home-content`],
  ] as const) {
    await ok(upload(stack.url, user, { filename: 'x.md', content }, { path }), 200);
    owned.files.push(path);
  }
  const page = await ok(user.request('GET', '/v1/agent/files?recursive=true&limit=1'), 200);
  await seedAgents(user, { names: [`${tag}-agent-a`, `${tag}-agent-b`], projectName: project, knowledge: owned.files[0]!, chatTitle: `${tag}-chat-title`, triggerName: `${tag}-trigger-name`, text: tag }, owned);
  const webhook = await ok(user.request('POST', '/v1/webhooks', { url: `${FUZZ_WEBHOOK_URL}${tag}`, events: ['project.updated'], description: `${tag}-webhook` }));
  owned.webhooks.push(webhook.webhookId);
  const markers = [`${tag}-webhook`, webhook.secret, project, `${tag}-goal`, `${tag}-instructions`, `${tag}-content`, `${tag}-home-content`, `${tag}-secret.md`, `${tag}-home.txt`, `${tag}-agent-a`, `${tag}-agent-b`, `${tag}-description`, `${tag}-starter`, `${tag}-chat-title`, `${tag}-trigger-name`];
  const ids = [...owned.webhooks, ...owned.agents.flatMap((a) => [a.agentId, a.configId]), ...[...owned.chats, ...owned.schedules, ...owned.triggers].flatMap((c) => [c.id, ...(c.secret ? [c.secret] : [])])];
  return { ...owned, sub: user.sub, cursors: [before.cursor, page.cursor], secrets: [user.sub, ...markers, ...ids] };
}

/** The fuzzing user's starting state: projects, files, Agents and their children. */
export async function seedSelf(stack: Stack, user: ApiUser, tag: string): Promise<Owned> {
  const owned: Owned = { agents: [], chats: [], schedules: [], triggers: [], files: [], projects: ['Home'], webhooks: [] };
  for (const name of [`fz-${tag}-one`, `fz-${tag}-two`]) {
    await ok(user.request('POST', '/v1/agent/projects', { name }));
    owned.projects.push(name);
  }
  const paths = ['/files/fz/seed/a.txt', '/files/fz/seed/b.md', '/files/fz/seed/deep/c.json', '/files/fz/e.bin', `/files/projects/fz-${tag}-one/readme.md`, '/files/fz/seed/ü 日本.txt'];
  for (const [i, path] of paths.entries()) {
    await ok(upload(stack.url, user, { filename: 'seed.txt', content: `seed ${i} `.repeat(i * 10 + 1) }, { path }), 200);
    owned.files.push(path);
  }
  for (const events of [['*'], ['file.created', 'agent.updated']]) owned.webhooks.push((await ok(user.request('POST', '/v1/webhooks', { url: FUZZ_WEBHOOK_URL, events }))).webhookId);
  await seedAgents(user, { names: ['fz agent one', 'fz agent two', 'fz agent three'], projectName: `fz-${tag}-one`, knowledge: paths[0]!, chatTitle: 'fz chat', triggerName: 'fz trigger', text: 'fz' }, owned);
  return owned;
}

/** An Authorization header for each kind of credentials the fuzzer sends. */
export async function credentialsFor(stack: Stack, user: ApiUser): Promise<Credentials> {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return {
    self: `Bearer ${user.token}`,
    none: undefined,
    garbage: 'Bearer not.a.jwt',
    basic: 'Basic dXNlcjpwYXNz',
    expired: `Bearer ${await mintToken({ secret: stack.secret, sub: user.sub, expiresIn: -3600 })}`,
    'wrong-secret': `Bearer ${await mintToken({ secret: 'not the secret', sub: user.sub })}`,
    'alg-none': `Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: user.sub, exp: now + 3600 })}.`,
    'sub-unicode': `Bearer ${await stack.token('josé-用户')}`,
    'sub-spaces': `Bearer ${await stack.token('  padded user  ')}`,
    'sub-emoji': `Bearer ${await stack.token('😀'.repeat(256))}`,
  };
}
