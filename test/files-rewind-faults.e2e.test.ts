import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RedisClient } from '@workspace/platform';
import { testRedis } from './support/backends.js';
import { q, upload } from './support/files.js';
import { buildTree, list, move, ok, pool, put, ready, sha256 } from './support/files-api.js';
import { killProcesses, replicaKeys, reviveProcesses } from './support/processes.js';
import { request, startStack, type ApiResponse, type ApiUser, type Stack } from './support/stack.js';

/**
 * A rewind (docs/api/files.md#rewind) under faults: the files service killed while one is in
 * flight, and rewinds racing each other and uploads through two replicas. A rewind is one Lua
 * script, so whatever happens around it, the tree is the one of before or the one of then, whole.
 */
let stack: Stack;
let redis: RedisClient;
beforeAll(async () => {
  stack = await startStack();
  redis = testRedis('rewind-faults');
});
afterAll(async () => {
  await redis?.quit();
  await stack?.stop();
});

const scaled = inject('infra').topology === 'scaled';
type Tree = Record<string, string>;
type Outcome = { res?: ApiResponse; error?: unknown; ms: number };

const gateways = () => replicaKeys(stack, 'gateway').map((k) => `http://127.0.0.1:${stack.services[k]!.port}`);

/** A JSON call through one gateway, bounded: a hang is an error (TimeoutError), never a pending test. */
async function call(gateway: string, u: ApiUser, method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<Outcome> {
  const t = performance.now();
  const init = { method, headers: { authorization: `Bearer ${u.token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) };
  return request(`${gateway}${path}`, init).then((res) => ({ res, ms: performance.now() - t }), (error: unknown) => ({ error, ms: performance.now() - t }));
}
const rewind = (gateway: string, u: ApiUser, path: string, to: string) => call(gateway, u, 'POST', '/v1/agent/files/rewind', { path, to });

async function rewound(gateway: string, u: ApiUser, path: string, to: string): Promise<ApiResponse> {
  const o = await rewind(gateway, u, path, to);
  expect(o.res?.status, o.res?.text ?? String(o.error)).toBe(200);
  return o.res!;
}

async function checkpoint(u: ApiUser, path: string): Promise<string> {
  const res = await u.request('POST', '/v1/agent/files/checkpoints', { path });
  expect(res.status, res.text).toBe(201);
  return res.body.checkpointId;
}

/** Every file at or below `root`: path → sha256, from one recursive listing. */
async function tree(u: ApiUser, root: string): Promise<Tree> {
  return Object.fromEntries((await list(u, root, { recursive: true })).filter((e) => e.type === 'file').map((e) => [e.path, e.sha256!]));
}

/** The name of the tree `t` is exactly, or a description of how far it is from each. */
function which(t: Tree, named: Record<string, Tree>): string {
  const equal = (a: Tree, b: Tree) => Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([p, h]) => b[p] === h);
  const found = Object.entries(named).find(([, want]) => equal(t, want));
  if (found) return found[0];
  const off = (want: Tree) => Object.keys({ ...want, ...t }).filter((p) => want[p] !== t[p]).length;
  return `mixed (${Object.keys(t).length} files; ${Object.entries(named).map(([name, want]) => `${off(want)} paths differ from ${name}`).join(', ')})`;
}

const rebase = (t: Tree, from: string, to: string): Tree => Object.fromEntries(Object.entries(t).map(([p, h]) => [to + p.slice(from.length), h]));

/** A tree of 3,008 files (47 distinct contents) at `root`, built with few uploads. */
async function built(u: ApiUser, root: string): Promise<Tree> {
  expect((await buildTree(stack, u, root, 47, 6)).files.size).toBe(3008);
  return tree(u, root);
}

/** Changes many files of a built tree: `n` modified and `n` created by upload, a folder deleted, another moved. */
async function change(u: ApiUser, root: string, tag: string, n: number, folders: [deleted: string, moved: string]): Promise<void> {
  const files = Object.keys(await tree(u, root)).sort();
  await pool(Array.from({ length: n }, (_, i) => i), 8, async (i) => {
    await put(stack, u, files[(i * 7) % files.length]!, `${tag} modified ${i}\n`);
    await put(stack, u, `${root}/${tag}/n${i}.txt`, `${tag} created ${i}\n`);
  });
  expect((await u.request('DELETE', `/v1/agent/files?path=${q(`${root}/${folders[0]}`)}&recursive=true`)).status).toBe(200);
  await ok(move(u, `${root}/${folders[1]}`, `${root}/${tag}-moved`));
}

/** Waits until file calls are served again through every gateway. */
async function serving(u: ApiUser): Promise<void> {
  await ready(stack.url);
  const probe = async () => (await Promise.all(gateways().map((g) => call(g, u, 'GET', '/v1/agent/files', undefined, 5_000)))).every((o) => o.res?.status === 200);
  await expect.poll(probe, { timeout: 30_000, interval: 100 }).toBe(true);
}

/**
 * When the rewind script to `to` sent at or after `since` (ms since the epoch) ran: its NOW
 * argument (the files service's clock as it sent the script) and its run time, from the
 * SLOWLOG of every master (a rewind of thousands of files takes well over its 10 ms). The
 * arguments are those checkpoints.redis.ts sends: NOW is the 7th, the mode and `to` the 15th and 16th
 * (after the bounds, MAX_TREE_ENTRIES and MAX_FILES, in ARGV[7] and ARGV[8]).
 */
async function scriptRun(to: string, since: number): Promise<{ at: number; ms: number } | undefined> {
  const entries = (await Promise.all(('nodes' in redis ? redis.nodes('master') : [redis]).map((n) => n.call('SLOWLOG', 'GET', '128')))).flat() as [number, number, number, string[]][];
  const mine = entries.filter(([, , , args]) => args[14] === 'ck' && args[15] === to && Number(args[6]) >= since);
  return mine.length === 1 ? { at: Number(mine[0]![3][6]), ms: mine[0]![2] / 1000 } : undefined;
}

describe('files — rewind under faults', () => {
  it(`rewind — the files service (${scaled ? 'both replicas' : 'its one replica'}) killed mid-rewind of 3,008 files: the tree is exactly the one of before or the checkpoint's, and a second rewind gives the checkpoint's`, async () => {
    const u = await stack.user();
    const [gw] = gateways();
    const original = await built(u, '/files/w');
    const to = await checkpoint(u, '/files/w');
    await change(u, '/files/w', 'later', 60, ['a/a/a', 'b/b']);
    const changed = await tree(u, '/files/w');
    expect(which(changed, { original }), 'the changes changed the tree').not.toBe('original');
    const back = await checkpoint(u, '/files/w');
    // Where the script runs within the request (from its start): the kills aim at that window.
    let window = { from: 0, ms: 0 };
    const timed = async (fn: () => Promise<Outcome>) => {
      const since = Date.now();
      const o = await fn();
      const run = await scriptRun(to, since);
      if (run) window = { from: run.at - since, ms: run.ms };
      return { o, since, run };
    };
    for (let i = 0; i < 2; i++) {
      await timed(() => rewind(gw!, u, '/files/w', to));
      await rewound(gw!, u, '/files/w', back);
    }
    expect(window.ms, 'the rewind script is in the SLOWLOG').toBeGreaterThan(0);
    const rounds: string[] = [];
    const landed = { before: 0, during: 0, after: 0, answered: 0 };
    for (const aim of [-1, 0.2, 0.5, 0.8, 0.35, 0.65, 2]) {
      if (which(await tree(u, '/files/w'), { changed }) !== 'changed') await rewound(gw!, u, '/files/w', back);
      expect(which(await tree(u, '/files/w'), { changed })).toBe('changed');
      const delay = aim < 0 ? 0 : Math.round(window.from + aim * window.ms);
      let killedAt = 0;
      const { o, since, run } = await timed(async () => {
        const sent = rewind(gw!, u, '/files/w', to);
        await sleep(delay);
        killedAt = Date.now();
        await killProcesses(stack, replicaKeys(stack, 'files'));
        // Started again at once, as a supervisor would: a gateway that waits for the service gets it back.
        await reviveProcesses(stack, replicaKeys(stack, 'files'));
        return sent;
      });
      await serving(u);
      const state = which(await tree(u, '/files/w'), { before: changed, checkpoint: original });
      const when = state === 'before' ? 'before' : o.res?.status === 200 ? 'answered' : run && killedAt <= run.at + run.ms ? 'during' : 'after';
      rounds.push(`kill ${killedAt - since} ms in: ${o.res ? `${o.res.status} ${o.res.body?.error?.code ?? ''}` : String(o.error)} after ${Math.round(o.ms)} ms; script ${run ? `sent ${run.at - since} ms in, ran ${Math.round(run.ms)} ms` : 'never ran'}; tree = ${state} (${when})`);
      expect(['before', 'checkpoint'], rounds.at(-1)).toContain(state);
      expect(o.res, `the client got an answer: ${String(o.error)}`).toBeDefined();
      if (o.res!.status === 200) expect(state, 'a rewind that answered 200 happened').toBe('checkpoint');
      else {
        expect(o.res!.status, o.res!.text).toBeGreaterThanOrEqual(500);
        expect(Object.keys(o.res!.body ?? {}), o.res!.text).toEqual(['error']);
      }
      landed[when]++;
      await rewound(gw!, u, '/files/w', to);
      expect(which(await tree(u, '/files/w'), { checkpoint: original }), 'a second rewind to the checkpoint').toBe('checkpoint');
    }
    console.log(`kills ${JSON.stringify(landed)} (during: between the script's sending and the end of its run; after: script done, answer lost):\n  ${rounds.join('\n  ')}`);
    expect(landed.during, 'at least one kill landed while the rewind script was in flight').toBeGreaterThan(0);
  }, 300_000);

  it.runIf(scaled)('rewind — two replicas (e2e-scaled only): two rewinds to two checkpoints at once through the two gateways both answer; the tree is exactly the target of the one that ran last', async () => {
    const u = await stack.user();
    const [g1, g2] = gateways();
    const first = await built(u, '/files/r');
    const c1 = await checkpoint(u, '/files/r');
    await change(u, '/files/r', 'second', 30, ['a/a/a', 'b/b']);
    const second = await tree(u, '/files/r');
    const c2 = await checkpoint(u, '/files/r');
    await change(u, '/files/r', 'third', 30, ['a/b/a', 'b/a']);
    const third = await tree(u, '/files/r');
    const c3 = await checkpoint(u, '/files/r');
    const orders: string[] = [];
    for (let round = 0; round < 3; round++) {
      const [r1, r2] = await Promise.all([rewind(g1!, u, '/files/r', c1), rewind(g2!, u, '/files/r', c2)]);
      for (const o of [r1, r2]) expect(o.res?.status, o.res?.text ?? String(o.error)).toBe(200);
      // What each rewind replaced is in the checkpoint it took just before: fork both and look.
      const seen: Tree[] = [];
      for (const [i, o] of [r1, r2].entries()) {
        await ok(u.request('POST', '/v1/agent/files/copy', { from: '/files/r', to: `/files/seen${round}-${i}`, at: o.res!.body.checkpointId }));
        seen.push(rebase(await tree(u, `/files/seen${round}-${i}`), `/files/seen${round}-${i}`, '/files/r'));
      }
      const replaced = seen.map((t) => which(t, { first, second, third }));
      const last = replaced[0] === 'second' ? 'first' : 'second';
      orders.push(`${last === 'first' ? c1 : c2} last (replaced ${replaced.join(' / ')})`);
      expect([['third', 'first'], ['second', 'third']], `each replaced the tree of before or the other's target, in one order: ${replaced.join(', ')}`).toContainEqual(replaced);
      expect(which(await tree(u, '/files/r'), { first, second, third }), 'the target of the last').toBe(last);
      await rewound(g1!, u, '/files/r', c3);
    }
    console.log(`concurrent rewinds: ${orders.join('; ')}`);
  }, 240_000);

  it.runIf(scaled)('rewind — two replicas (e2e-scaled only): rewinds racing uploads through the other gateway: every listing is the tree of before or the checkpoint\'s, plus some of the racing uploads', async () => {
    const u = await stack.user();
    const [g1, g2] = gateways();
    const then = await built(u, '/files/s');
    const to = await checkpoint(u, '/files/s');
    await change(u, '/files/s', 'later', 30, ['a/a/a', 'b/b']);
    const before = await tree(u, '/files/s');
    const pre = await checkpoint(u, '/files/s');
    // Uploads to new paths (each once, its own content) through g2, listings through both, while
    // the tree is rewound through g1 to the checkpoint, back to before, and so on, five times.
    const racing = new Map<string, string>();
    const uploads: { path: string; sent: number; done: number; status: number }[] = [];
    const listings: Tree[] = [];
    let stop = false;
    const uploader = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const path = `/files/s/race/w${w}-${i}.txt`;
        const content = `racing upload ${w}-${i}\n`;
        racing.set(path, sha256(content));
        const sent = performance.now();
        const res = await upload(g2!, u, { filename: 'race.txt', content }, { path, onConflict: 'overwrite' });
        uploads.push({ path, sent, done: performance.now(), status: res.status });
      }
    };
    const lister = async () => {
      while (!stop) listings.push(await tree(u, '/files/s'));
    };
    const racers = [uploader(0), uploader(1), uploader(2), lister()];
    let last = { sent: 0, done: 0 };
    for (const target of [to, pre, to, pre, to]) {
      await expect.poll(() => uploads.length, { timeout: 30_000, interval: 20 }).toBeGreaterThan(uploads.length + 2);
      last = { sent: performance.now(), done: 0 };
      await rewound(g1!, u, '/files/s', target);
      last.done = performance.now();
    }
    await expect.poll(() => uploads.filter((x) => x.sent > last.done).length, { timeout: 30_000, interval: 20 }).toBeGreaterThan(2);
    stop = true;
    await Promise.all(racers);
    expect(uploads.filter((x) => x.status !== 200)).toEqual([]);
    const final = await tree(u, '/files/s');
    const base = (t: Tree) => {
      for (const p of Object.keys(t).filter((p) => racing.has(p))) expect(t[p], `${p} holds its racing upload`).toBe(racing.get(p));
      return which(Object.fromEntries(Object.entries(t).filter(([p]) => !racing.has(p))), { before, checkpoint: then });
    };
    const states = [...listings, final].map(base);
    expect(states.filter((s) => s !== 'before' && s !== 'checkpoint')).toEqual([]);
    expect(base(final), 'after the last rewind').toBe('checkpoint');
    const gone = uploads.filter((x) => x.done < last.sent).map((x) => x.path);
    const kept = uploads.filter((x) => x.sent > last.done).map((x) => x.path);
    expect(gone.filter((p) => p in final), 'uploads done before the last rewind was sent are in the trash').toEqual([]);
    expect(kept.filter((p) => !(p in final)), 'uploads sent after it answered are there').toEqual([]);
    const count = (s: string) => states.filter((x) => x === s).length;
    const withUploads = [...listings, final].filter((t) => Object.keys(t).some((p) => racing.has(p))).length;
    console.log(`5 rewinds racing ${uploads.length} uploads (${uploads.length - gone.length - kept.length} of them overlapping the last one); ${states.length} listings: ${count('before')} before, ${count('checkpoint')} checkpoint, ${withUploads} with racing uploads`);
  }, 240_000);
});
