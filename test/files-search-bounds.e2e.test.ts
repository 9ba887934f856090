import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { q } from './support/files.js';
import { copy, move, ok, put } from './support/files-api.js';
import { mcpConnect } from './support/mcp.js';
import { replicaKeys } from './support/processes.js';
import { startStack, type ApiResponse, type ApiUser, type Stack } from './support/stack.js';

/**
 * No search holds anyone up (docs/api/files.md#search): matching runs in worker threads within a
 * budget, stops when its caller goes, at most MAX_SEARCHES_PER_USER run at once, and an answer
 * shows one state of the tree. Each case failed on the code before: a[^#]*b was quadratic in the
 * file (48 KiB held the files service 90 s), a heavy pattern held the event loop (other users got
 * 503), the work went on after the caller left, and a search racing a move saw both trees or neither.
 */
const BUDGET_MS = 4_000;
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ filesEnv: { SEARCH_BUDGET_MS: String(BUDGET_MS) }, gatewayEnv: { MAX_SEARCHES_PER_USER: '2' } });
});
afterAll(async () => {
  await stack?.stop();
});

const search = (u: ApiUser, params: Record<string, string | number | boolean>, signal?: AbortSignal): Promise<ApiResponse> => {
  const query = Object.entries(params)
    .map(([k, v]) => `${k}=${q(String(v))}`)
    .join('&');
  if (!signal) return u.request('GET', `/v1/agent/files/search?${query}`);
  return fetch(`${stack.url}/v1/agent/files/search?${query}`, { headers: { authorization: `Bearer ${u.token}` }, signal }).then(async (res) => ({ status: res.status, headers: res.headers, body: await res.json(), text: '' }));
};

/** A line that a heavy pattern must search hard: 512 KiB of `a`, with a `z` every 1,000 characters. */
const HEAVY_TEXT = `${'a'.repeat(999)}z`.repeat(512);
const HEAVY_Q = { q: '[^\\n]{0,500}z', regex: true, limit: 1000 };

/** CPU time (ms) the files replicas have used so far (Linux: /proc/<pid>/stat utime + stime, 100 ticks a second). */
function filesCpuMs(): number {
  return replicaKeys(stack, 'files').reduce((sum, key) => {
    const stat = readFileSync(`/proc/${stack.services[key]!.child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return sum + (Number(fields[11]) + Number(fields[12])) * 10;
  }, 0);
}

/** Another user's listing and read, answered as usual (200, each well under a second) while `busy` runs. */
async function othersServed(busy: Promise<unknown>): Promise<number[]> {
  const other = await stack.user();
  await put(stack, other, '/files/mine.txt', 'mine');
  const took: number[] = [];
  let done = false;
  void busy.then(
    () => (done = true),
    () => (done = true),
  );
  while (!done || took.length < 5) {
    const started = performance.now();
    const [listed, read] = await Promise.all([other.request('GET', '/v1/agent/files?path=/files'), other.request('GET', '/v1/agent/files/read?path=/files/mine.txt')]);
    expect([listed.status, read.status]).toEqual([200, 200]);
    took.push(performance.now() - started);
    await sleep(50);
  }
  return took;
}

describe('search bounds', () => {
  it('search bounds — a[^#]*b over a 1 MiB file of `a` lines is linear: it answers at once, exact, and others are served meanwhile', async () => {
    const u = await stack.user();
    const lines = 512 * 1024 - 1;
    await put(stack, u, '/files/q/a.txt', `${'a\n'.repeat(lines)}b`);
    await put(stack, u, '/files/q/b.txt', `${'a\n'.repeat(24 * 512)}ab`);
    const running = (async () => {
      const res = await search(u, { q: 'a[^#]*b', regex: true, path: '/files/q' });
      expect(res.status, res.text).toBe(200);
      return res.body;
    })();
    const took = await othersServed(running);
    const found = await running;
    expect(found.matches.map((m: { path: string; line: number; column: number }) => `${m.path}:${m.line}:${m.column}`)).toEqual([`/files/q/b.txt:${24 * 512 + 1}:1`]);
    expect(found.filesSearched).toBe(2);
    expect(Math.max(...took)).toBeLessThan(1_000);
  });

  it('search bounds — a heavy pattern over large files passes its budget: 422 SEARCH_TOO_EXPENSIVE (details.budgetMs), and others are served meanwhile', async () => {
    const u = await stack.user();
    for (let i = 0; i < 8; i++) await put(stack, u, `/files/heavy/${i}.txt`, HEAVY_TEXT);
    const started = performance.now();
    const running = search(u, { ...HEAVY_Q, path: '/files/heavy' });
    const took = await othersServed(running);
    const res = await running;
    expect(res.status, res.text).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'SEARCH_TOO_EXPENSIVE', details: { budgetMs: BUDGET_MS } });
    // The budget is matching time: the answer comes soon after it runs out, never after the gateway's deadline.
    expect(performance.now() - started).toBeLessThan(BUDGET_MS * 3);
    expect(Math.max(...took)).toBeLessThan(1_000);
    // One file fits the budget: the same pattern answers there.
    const one = await search(u, { ...HEAVY_Q, path: '/files/heavy/0.txt', limit: 5 });
    expect(one.status, one.text).toBe(200);
    expect(one.body.matches.map((m: { column: number }) => m.column)).toEqual([500, 1500, 2500, 3500, 4500]);
  });

  it('search bounds — a search whose caller goes away stops: the files service is idle again within a second', async () => {
    const u = await stack.user();
    for (let i = 0; i < 8; i++) await put(stack, u, `/files/gone/${i}.txt`, HEAVY_TEXT);
    const client = new AbortController();
    const running = search(u, { ...HEAVY_Q, path: '/files/gone' }, client.signal).catch((err: unknown) => err);
    // Busy matching: a CPU's worth.
    await sleep(800);
    const busyFrom = filesCpuMs();
    await sleep(500);
    expect(filesCpuMs() - busyFrom).toBeGreaterThan(250);
    client.abort();
    await running;
    await sleep(500);
    const idleFrom = filesCpuMs();
    await sleep(500);
    expect(filesCpuMs() - idleFrom).toBeLessThan(150);
  });

  it('search bounds — at most MAX_SEARCHES_PER_USER of one user at once: one more → 429 RATE_LIMITED with Retry-After; other users unaffected', async () => {
    const u = await stack.user();
    for (let i = 0; i < 4; i++) await put(stack, u, `/files/many/${i}.txt`, HEAVY_TEXT);
    const first = [search(u, { ...HEAVY_Q, path: '/files/many' }), search(u, { ...HEAVY_Q, path: '/files/many' })];
    await sleep(300);
    const third = await search(u, { ...HEAVY_Q, path: '/files/many' });
    expect(third.status, third.text).toBe(429);
    expect(third.body.error).toMatchObject({ code: 'RATE_LIMITED' });
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    const other = await stack.user();
    await put(stack, other, '/files/x.txt', 'zz');
    expect((await search(other, { q: 'z' })).status).toBe(200);
    for (const res of await Promise.all(first)) expect([200, 422], res.text).toContain(res.status);
    // Released: the user searches again.
    expect((await search(u, { q: 'nothing-here' })).status).toBe(200);
  });

  it('search bounds — an answer is one state of the tree: a search racing a move of 1,024 matching files sees one tree, never both or neither', async () => {
    const u = await stack.user();
    await put(stack, u, '/files/snap/a/f.txt', 'needle\n');
    // Doubled ten times: a copy of the tree goes into the tree (1,024 files, each a match, and 1,023 folders: three listing steps).
    for (let level = 0; level < 10; level++) {
      await ok(copy(u, '/files/snap/a', '/files/snap/c'));
      await ok(move(u, '/files/snap/c', `/files/snap/a/${level}`));
    }
    let from = '/files/snap/a';
    let to = '/files/snap/b';
    for (let round = 0; round < 8; round++) {
      const [found, moved] = await Promise.all([search(u, { q: 'needle', path: '/files/snap', limit: 1000 }), (async () => (await sleep(round * 7), move(u, from, to)))()]);
      expect(moved.status, moved.text).toBe(200);
      expect(found.status, found.text).toBe(200);
      const trees = new Set(found.body.matches.map((m: { path: string }) => m.path.split('/').slice(0, 4).join('/')));
      expect(found.body.matches).toHaveLength(1000);
      expect(found.body.hasMore).toBe(true);
      expect(trees.size, [...trees].join(' ')).toBe(1);
      [from, to] = [to, from];
    }
  });

  it('search bounds — MCP grep holds a search slot too, and search_files matches with the one linear glob (*a*a*a…b on a 255-character name)', async () => {
    const u = await stack.user();
    const name = `${'a'.repeat(251)}.txt`;
    await put(stack, u, `/files/g/${name}`, 'x');
    const c = await mcpConnect(stack.url, u);
    const started = performance.now();
    const found = await c.call('search_files', { path: '/files/g', pattern: '*a*a*a*a*a*a*a*a*a*a*a*a*b' });
    expect(found.content[0]!.text).toBe('No matches found');
    expect((await c.call('search_files', { path: '/files/g', pattern: '*a*a*a*a*a*a*a*a*a*a*a*a*.txt' })).structuredContent.matches).toEqual([`/files/g/${name}`]);
    expect(performance.now() - started).toBeLessThan(2_000);
    const grep = await c.call('grep', { path: '/files/g', pattern: 'x' });
    expect(grep.structuredContent.matches).toHaveLength(1);
    await c.close();
  });

  it('search bounds — concurrent searches leave no MaxListenersExceededWarning in the files service', async () => {
    const u = await stack.user();
    for (let i = 0; i < 40; i++) await put(stack, u, `/files/w/${i}.txt`, `line ${i}\nneedle ${i}\n`);
    await Promise.all(Array.from({ length: 2 }, () => search(u, { q: 'needle', path: '/files/w', limit: 1000 })));
    for (let i = 0; i < 6; i++) await Promise.all([search(u, { q: 'e', path: '/files/w', limit: 1000 }), search(u, { q: 'line', path: '/files/w', limit: 1000 })]);
    expect(stack.stderrOf('files')).not.toContain('MaxListenersExceededWarning');
  });
});
