import { createRedis, errors, type RedisClient, RedisOutbox, userTag } from '@workspace/platform';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newUserId } from '@workspace/testkit';
import { RedisProjectRepo } from '../src/adapters/project-repo.redis.js';
import type { WorkspaceFiles } from '../src/domain/ports.js';
import { Projects } from '../src/domain/projects.js';

/**
 * The files port, recording what would be written; the real files service is covered end to
 * end (test/files.e2e.test.ts). `failures` makes the next writes fail as an outage would.
 */
class RecordingFiles implements WorkspaceFiles {
  readonly written = new Map<string, string>();
  failures = 0;
  async writeText(userId: string, path: string, content: string): Promise<void> {
    if (this.failures > 0) {
      this.failures--;
      throw errors.unavailable('the files service');
    }
    this.written.set(`${userId} ${path}`, content);
  }
}

let redis: RedisClient;
let projects: Projects;
const files = new RecordingFiles();
beforeAll(() => {
  redis = createRedis({ url: inject('infra').redisUrl });
  projects = new Projects({ repo: new RedisProjectRepo({ redis, outbox: new RedisOutbox({ redis, namespace: 'projects-test' }) }), files });
});
afterAll(async () => {
  await redis.quit();
});

describe('projects repository on Redis', () => {
  it('projects repo — concurrent creates of one name: exactly one wins', async () => {
    const user = newUserId();
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => projects.create(user, { name: i % 2 ? 'Same' : 'SAME' })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(Array(49).fill('PROJECT_EXISTS'));
  });

  it('projects repo — concurrent updates of different fields all land (compare-and-set retries)', async () => {
    const user = newUserId();
    await projects.create(user, { name: 'P' });
    await Promise.all([
      projects.update(user, 'p', { goal: 'new goal' }),
      projects.update(user, 'P', { instructions: 'new instructions' }),
      projects.update(user, 'P', { archived: true }),
    ]);
    const [stored] = await projects.list(user, true).then((all) => all.filter((p) => p.name === 'P'));
    expect(stored).toMatchObject({ goal: 'new goal', instructions: 'new instructions', archived: true });
  });

  it('projects repo — one user\'s keys share one hash tag', async () => {
    const user = newUserId();
    await projects.create(user, { name: 'Tagged' });
    expect(await redis.hexists(`projects:${userTag(user)}`, 'tagged')).toBe(1);
    expect(userTag(user)).toMatch(/^\{u:[0-9a-f]{64}\}$/);
  });

  it('projects repo — create writes the context file before it returns', async () => {
    const user = newUserId();
    await projects.create(user, { name: 'Plan: Q3', goal: 'Ship it', instructions: 'Be brief.' });
    expect(files.written.get(`${user} /files/projects/Plan: Q3/CONTEXT.md`)).toBe('# Plan: Q3\n\n## Goal\n\nShip it\n\n## Instructions\n\nBe brief.\n');
    await projects.ensureHome(user);
    expect(files.written.get(`${user} /files/projects/Home/CONTEXT.md`)).toMatch(/^# Home\n\n## Goal\n/);
  });

  it('projects repo — a context file that cannot be written undoes the create, so a retry succeeds', async () => {
    const user = newUserId();
    files.failures = 1;
    await expect(projects.create(user, { name: 'Flaky' })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect((await projects.list(user, true)).map((p) => p.name)).toEqual(['Home']);
    await expect(projects.create(user, { name: 'Flaky' })).resolves.toMatchObject({ name: 'Flaky' });
    files.failures = 1;
    const other = newUserId();
    await expect(projects.ensureHome(other)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(await projects.ensureHome(other)).toBe(true);
    expect(files.written.has(`${other} /files/projects/Home/CONTEXT.md`)).toBe(true);
  });

  it('projects repo — each change appends its event to the user\'s outbox in the same script; a refused write appends none', async () => {
    const user = newUserId();
    const outbox = new RedisOutbox({ redis, namespace: 'projects-test' });
    const events = async () => (await redis.lrange(outbox.listKey(userTag(user)), 0, -1)).map((raw) => JSON.parse(raw) as { type: string; data: Record<string, unknown> });
    await projects.create(user, { name: 'Evented' });
    await expect(projects.create(user, { name: 'EVENTED' })).rejects.toMatchObject({ code: 'PROJECT_EXISTS' });
    await projects.update(user, 'evented', { archived: true });
    await projects.update(user, 'evented', { archived: true });
    const types = (await events()).map((e) => `${e.type}:${String(e.data.name)}:${String(e.data.archived)}`);
    expect(types).toEqual(['project.created:Evented:false', 'project.updated:Evented:true']);
    expect((await events())[0]!.data.userId).toBe(user);
  });
});
