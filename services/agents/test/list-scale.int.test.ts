import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { userTag } from '@workspace/platform';
import { newUserId } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { listAgents } from '../src/domain/agent-list.js';
import { harness, type Harness } from './support/harness.js';

// 10,000 Agents of one user: a page without q must cost O(page size) (a rank range of the
// sorted index plus one read per Agent on the page), never a scan. Commands are counted with
// MONITOR, filtered to this user's keys, so other tests on the same Redis do not disturb it.
const AGENTS = 10_000;
let h: Harness;
let monitor: Redis;
const user = { userId: newUserId('scale') };
const seen: string[][] = [];

beforeAll(async () => {
  h = harness({ url: inject('infra').redisUrl });
  for (let i = 0; i < AGENTS; i += 200) {
    await Promise.all(Array.from({ length: Math.min(200, AGENTS - i) }, (_, j) => h.agents.create(user, { name: `Agent ${i + j}`, description: (i + j) % 1000 === 0 ? 'needle' : '' })));
  }
  monitor = await new Redis(inject('infra').redisUrl).monitor();
  const tag = userTag(user.userId);
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (args.some((a) => a.includes(tag))) seen.push(args);
  });
}, 120_000);
afterAll(async () => {
  monitor?.disconnect();
  // 10,000 Agents are worth removing from a shared Redis.
  const keys = await h.redis.keys(`agents:${userTag(user.userId)}:*`);
  for (let i = 0; i < keys.length; i += 1_000) await h.redis.unlink(...keys.slice(i, i + 1_000));
  await h?.close();
});

async function measure<T>(fn: () => Promise<T>): Promise<{ value: T; commands: string[][]; ms: number }> {
  await h.redis.ping(); // MONITOR delivers in order: what came before this ping is not ours
  await new Promise((r) => setTimeout(r, 50));
  seen.length = 0;
  const started = performance.now();
  const value = await fn();
  const ms = performance.now() - started;
  await new Promise((r) => setTimeout(r, 100));
  return { value, commands: [...seen], ms };
}

describe('agent list at scale', () => {
  it(`agent list — with ${AGENTS} Agents a page without q reads the page only, wherever it is`, async () => {
    for (const page of [1, 250, 500]) {
      const { value, commands, ms } = await measure(() => listAgents(h.repo, user, { page, limit: 20 }));
      expect(value.total).toBe(AGENTS);
      expect(value.agents).toHaveLength(20);
      const names = commands.map((c) => c[0]!.toLowerCase());
      expect(names.filter((n) => n === 'hgetall')).toHaveLength(20);
      expect(names.filter((n) => n === 'zrevrange')).toHaveLength(1);
      expect(commands.length).toBeLessThanOrEqual(20 + 3);
      console.log(`list page ${page} of ${AGENTS}: ${commands.length} commands, ${ms.toFixed(1)} ms`);
    }
  });

  it(`agent list — q is served by its index: one script, full records for the page only`, async () => {
    const { value, commands, ms } = await measure(() => listAgents(h.repo, user, { q: 'NEEDLE', limit: 5 }));
    expect(value.total).toBe(AGENTS / 1000);
    expect(value.agents).toHaveLength(5);
    const names = commands.map((c) => c[0]!.toLowerCase());
    expect(names.filter((n) => n === 'hgetall')).toHaveLength(5);
    // The script's own commands: the coverage check, the intersection, one HMGET per candidate.
    expect(names.filter((n) => n === 'hmget').length).toBeLessThanOrEqual(AGENTS / 1000);
    expect(names.filter((n) => n === 'zrevrange' || n === 'zrange')).toHaveLength(0);
    console.log(`list q over ${AGENTS}: ${commands.length} commands, ${ms.toFixed(1)} ms`);
  });
});
