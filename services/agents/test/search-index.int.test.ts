import { newUserId } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgentSearchIndex } from '../src/adapters/agent-search.redis.js';
import { searchKeysOf, trigramsOf } from '../src/adapters/search-index.js';
import { listAgents } from '../src/domain/agent-list.js';
import { normalizeText } from '../src/domain/text.js';
import { harness, type Harness } from './support/harness.js';

// The `q` index against a brute-force scan: random names and descriptions over an alphabet
// that NFKC, case folding and white space collapsing all change (ligatures, full-width
// letters, İ whose lower case is two code points, ß, emoji, tabs and newlines, Lua pattern
// characters), and queries cut from them or made up, of every length from 1 character.
const ALPHABET = ['a', 'b', 'A', 'B', 'é', 'É', 'e\u0301', 'ß', 'ﬁ', 'Ａ', 'İ', 'i', '😀', ' ', '  ', '\t', '\n', '%', '.', '[', '-', '0', '1'];

let h: Harness;
beforeAll(() => {
  h = harness({ url: inject('infra').redisUrl });
});
afterAll(async () => {
  await h?.close();
});

/** A seeded generator, so a failure can be run again. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function text(rnd: () => number, max: number): string {
  const n = 1 + Math.floor(rnd() * max);
  return Array.from({ length: n }, () => ALPHABET[Math.floor(rnd() * ALPHABET.length)]).join('');
}

/** A name the contract accepts: 1–100 characters after trimming. */
function name(rnd: () => number): string {
  const out = text(rnd, 12).trim();
  return out.length > 0 ? out : 'x';
}

interface Known {
  agentId: string;
  createdAt: string;
  name: string;
  description: string;
}

/** Every Agent matching q, newest first, by the contract's words. */
function bruteForce(agents: Iterable<Known>, q: string): string[] {
  const nq = normalizeText(q);
  return [...agents]
    .filter((a) => normalizeText(a.name).includes(nq) || normalizeText(a.description).includes(nq))
    .sort((a, b) => (a.createdAt === b.createdAt ? (a.agentId < b.agentId ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1))
    .map((a) => a.agentId);
}

async function everyMatch(scope: { userId: string }, q: string): Promise<{ ids: string[]; total: number }> {
  const ids: string[] = [];
  let total = 0;
  for (let page = 1; ; page++) {
    const out = await listAgents(h.repo, scope, { q, page, limit: 100 });
    total = out.total;
    ids.push(...out.agents.map((a) => a.agentId));
    if (out.agents.length < 100) break;
  }
  return { ids, total };
}

async function compare(scope: { userId: string }, known: Map<string, Known>, queries: string[]): Promise<void> {
  for (const q of queries) {
    if (normalizeText(q) === '') continue; // no q at all: the plain list
    const want = bruteForce(known.values(), q);
    const got = await everyMatch(scope, q);
    expect({ q, ids: got.ids, total: got.total }).toEqual({ q, ids: want, total: want.length });
  }
}

function queriesFrom(rnd: () => number, known: Map<string, Known>, count: number): string[] {
  const texts = [...known.values()].flatMap((a) => [a.name, a.description]);
  return Array.from({ length: count }, (_, i) => {
    if (i % 3 === 0) return text(rnd, 4);
    const t = texts[Math.floor(rnd() * texts.length)] ?? 'a';
    const points = Array.from(t);
    const from = Math.floor(rnd() * points.length);
    const cut = points.slice(from, from + 1 + Math.floor(rnd() * 6)).join('');
    return i % 2 === 0 ? cut.toUpperCase() : ` ${cut} `;
  });
}

async function seed(scope: { userId: string }, rnd: () => number, count: number): Promise<Map<string, Known>> {
  const known = new Map<string, Known>();
  await Promise.all(
    Array.from({ length: count }, async () => {
      const fields = { name: name(rnd), description: text(rnd, 30) };
      const { agent } = await h.agents.create(scope, fields);
      known.set(agent.agentId, { agentId: agent.agentId, createdAt: agent.createdAt, ...fields });
    }),
  );
  return known;
}

/**
 * Removes the user's whole `q` index, as if every Agent had been written before it existed.
 * The keys are computed from every text the Agents ever held (no KEYS on a shared Redis).
 */
async function dropIndex(userId: string, texts: string[]): Promise<void> {
  const keys = searchKeysOf(userId);
  const all = [keys.docs, ...new Set(texts.flatMap((t) => trigramsOf(normalizeText(t)).map(keys.gram)))];
  for (let i = 0; i < all.length; i += 500) await h.redis.del(...all.slice(i, i + 500));
  expect(await h.redis.exists(...all)).toBe(0);
}

describe('q index', () => {
  it('q index — finds exactly what a scan by the contract finds, for random unicode names and queries', async () => {
    const rnd = random(16);
    const scope = { userId: newUserId('qindex') };
    const known = await seed(scope, rnd, 150);
    await compare(scope, known, queriesFrom(rnd, known, 150));
  }, 60_000);

  it('q index — follows PATCHes and deletes in the same write', async () => {
    const rnd = random(7);
    const scope = { userId: newUserId('qindex') };
    const known = await seed(scope, rnd, 40);
    const ids = [...known.keys()];
    for (const [i, agentId] of ids.entries()) {
      const entry = known.get(agentId)!;
      if (i % 3 === 0) {
        await h.agents.delete(scope, agentId);
        known.delete(agentId);
        continue;
      }
      const current = await h.agents.get(scope, agentId);
      const fields = i % 2 === 0 ? { name: name(rnd) } : { description: text(rnd, 30) };
      await h.agents.update(scope, agentId, current.agent.currentConfigId, fields);
      Object.assign(entry, fields);
    }
    const old = ['a', 'ab', 'é', ...queriesFrom(rnd, known, 80)];
    await compare(scope, known, old);
    // A renamed Agent is no longer found by its old name's own text.
    const renamed = { name: 'Zzzquux unique', description: '' };
    const target = ids.find((id) => known.has(id))!;
    const before = known.get(target)!;
    await h.agents.update(scope, target, (await h.agents.get(scope, target)).agent.currentConfigId, renamed);
    Object.assign(before, renamed);
    await compare(scope, known, ['zzzquux', 'ZZZQ', before.name]);
  }, 60_000);

  it('q index — Agents written before the index are found by a scan, then backfilled once (concurrent backfills agree)', async () => {
    const rnd = random(99);
    const scope = { userId: newUserId('qindex') };
    const known = await seed(scope, rnd, 60);
    // One Agent renamed while indexed, then (index gone) its description changed: the PATCH
    // indexes it whole again, its unchanged name included.
    const kept = [...known.values()][1]!;
    await h.agents.update(scope, kept.agentId, (await h.agents.get(scope, kept.agentId)).agent.currentConfigId, { name: 'Kept name here' });
    kept.name = 'Kept name here';
    await dropIndex(scope.userId, [...known.values()].flatMap((a) => [a.name, a.description]).concat(['Kept name here']));
    await h.agents.update(scope, kept.agentId, (await h.agents.get(scope, kept.agentId)).agent.currentConfigId, { description: 'changed' });
    kept.description = 'changed';
    const search = new AgentSearchIndex(h.redis);
    expect(await search.find(scope.userId, 'abc')).toBeUndefined();
    const queries = queriesFrom(rnd, known, 40);
    // Answered by the scan while the backfill the first search started runs.
    await compare(scope, known, queries);
    // Two replicas backfilling at once, and a PATCH racing them: the index ends up whole.
    const one = [...known.values()][0]!;
    await Promise.all([
      search.backfill(scope.userId),
      new AgentSearchIndex(h.redis).backfill(scope.userId),
      h.agents.update(scope, one.agentId, (await h.agents.get(scope, one.agentId)).agent.currentConfigId, { name: 'Racing rename' }).then(() => {
        one.name = 'Racing rename';
      }),
    ]);
    await expect.poll(() => search.find(scope.userId, 'zzz')).toEqual([]);
    await compare(scope, known, [...queries, 'racing', 'ng re', 'kept name', 'name here', 'changed']);
    // Idempotent: nothing left to index.
    expect(await search.backfill(scope.userId)).toBe(0);
  }, 60_000);
});
