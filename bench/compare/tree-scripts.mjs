// What the whole-tree scripts of the file index cost Redis itself: the CPU time a private
// redis-server spends (/proc/<pid>/schedstat: nanoseconds on a CPU) on a folder move, a recursive delete, its
// undo, a checkpoint and its delete, and a rewind after 1,000 changes, on a tree of 10,000 files in
// 100 folders, against a ZRANGEBYLEX of the same tree. CPU time of the one process that runs the
// Lua is what a shared, busy machine changes least (wall time under load is mostly waiting for a
// core), so two builds compare here when the bench's wall-time ratios cannot.
//
// Run from the repository root after a build (redis-server on PATH):
//   node bench/compare/tree-scripts.mjs
// COMPARE_WITH=/path/to/another/checkout (built, with its node_modules) runs the same rounds on its
// scripts too, alternating with ours. Knobs: COMPARE_ROUNDS (3), COMPARE_FOLDERS (100 of 100 files).
// COMPARE_CALLGRIND=1 runs the redis-server under valgrind's callgrind and counts each step's
// instructions instead (millions; instrumented only during the step): the same count for the same
// build and tree whatever else the machine does, so one round compares two builds to a percent
// (valgrind and callgrind_control from Debian's valgrind package; ~30 s a round).
//
// COMPARE_SIZES=10000,25000,50000 measures instead what MAX_TREE_ENTRIES bounds
// (docs/benchmarks.md#bounded-tree-work): the longest single Redis command (SLOWLOG, every command
// logged: slowlog-log-slower-than 0) of each tree operation — copy, move, recursive delete, restore
// of the folder, purge, checkpoint, rewind (to a checkpoint and to a time, every file coming back),
// fork — on a tree of each of those many entries (folders of 99 files, each folder an entry too),
// COMPARE_ROUNDS rounds each, and Redis's memory per entry once the tree is built.
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const ROUNDS = Number(process.env.COMPARE_ROUNDS ?? 3);
const FOLDERS = Number(process.env.COMPARE_FOLDERS ?? 100);
const builds = [resolve('.'), ...(process.env.COMPARE_WITH ? [resolve(process.env.COMPARE_WITH)] : [])];

const port = await new Promise((done) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port: free } = s.address();
    s.close(() => done(free));
  });
});
const CALLGRIND = process.env.COMPARE_CALLGRIND === '1';
const dumps = CALLGRIND ? mkdtempSync(join(tmpdir(), 'tree-scripts-')) : '';
const SIZES = (process.env.COMPARE_SIZES ?? '').split(',').filter(Boolean).map(Number);
const redisArgs = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...(SIZES.length ? ['--slowlog-log-slower-than', '0', '--slowlog-max-len', '1024'] : [])];
const server = CALLGRIND
  ? spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${dumps}/cg.%p`, 'redis-server', ...redisArgs], { stdio: 'ignore' })
  : spawn('redis-server', redisArgs, { stdio: 'ignore' });
process.on('exit', () => {
  server.kill();
  if (dumps) rmSync(dumps, { recursive: true, force: true });
});
await sleep(CALLGRIND ? 3_000 : 300);
/** The private Redis's CPU time so far, in ms. */
const cpu = () => {
  // The first field of schedstat is the time the process ran, in ns (its stat's utime and stime
  // count 10 ms ticks: too coarse for steps of 100–300 ms).
  return Math.round(Number(readFileSync(`/proc/${server.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6);
};

/** The last callgrind dump read: each step's is the next one. */
let lastDump;
/**
 * Runs f with callgrind counting, and gives its instructions in millions. Scripts share one Lua
 * state, whose collector is incremental: a full collection before the step and one inside it,
 * after, charge each step with its own garbage, none of the step before.
 */
async function instructions(redis, f) {
  const control = (...args) => execFileSync('callgrind_control', [...args, String(server.pid)], { stdio: 'ignore' });
  const collect = () => redis.eval("collectgarbage('collect') return 0", 0);
  await collect();
  control('-z');
  control('-i', 'on');
  await f();
  await collect();
  control('-i', 'off');
  control('-d');
  // The dump is written by the server while callgrind_control returns: wait until its totals are in.
  for (;;) {
    const last = readdirSync(dumps).filter((name) => /^cg\.\d+\.\d+$/.test(name)).sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop())).pop();
    const totals = last && readFileSync(join(dumps, last), 'utf8').match(/^totals: (\d+)/m);
    if (totals && last !== lastDump) {
      lastDump = last;
      return Math.round(Number(totals[1]) / 1e6);
    }
    await sleep(200);
  }
}

const pad = (n) => String(n).padStart(3, '0');
const event = JSON.stringify({ id: 'x', time: 't', source: 'bench' });
const entry = (seed) => ({ size: 10, mtime: Date.now(), sha256: createHash('sha256').update(seed).digest('hex'), key: `k/${seed}`, revision: `rev_${randomBytes(16).toString('hex')}` });

/**
 * One build's index on the private Redis, with a user holding the tree at /files/t: `folders`
 * folders of `files` files. The bounds are lifted (in a build that has them): the figures are what
 * they bound.
 */
async function open(root, folders = FOLDERS, files = 100) {
  const { createRedis, RedisOutbox } = await import(`${root}/packages/platform/dist/index.js`);
  const { IndexKeys, RedisFileIndex } = await import(`${root}/services/files/dist/adapters/index.redis.js`);
  const { RedisCheckpointIndex } = await import(`${root}/services/files/dist/adapters/checkpoints.redis.js`);
  const redis = createRedis({ url: `redis://127.0.0.1:${port}` });
  const keys = new IndexKeys(`cmp${randomBytes(4).toString('hex')}`);
  const outbox = new RedisOutbox({ redis, namespace: `cmp-${keys.namespace}` });
  const unbounded = { maxTreeEntries: 1e9, maxFiles: 1e9 };
  const index = new RedisFileIndex({ redis, keys, outbox, ...unbounded });
  const checkpoints = new RedisCheckpointIndex({ redis, keys, outbox, ...unbounded });
  const user = `u-${randomBytes(4).toString('hex')}`;
  for (let i = 0; i < files; i++) {
    await index.commit(user, { path: `/files/t/d000/f${pad(i)}.txt`, mode: 'error', uuidPath: '', entry: entry(`f${i}`), uploadId: '', event, quotaBytes: 0 });
  }
  for (let d = 1; d < folders; d++) await index.move(user, { op: 'copy', from: '/files/t/d000', to: `/files/t/d${pad(d)}`, mode: 'error', uuidPath: '', event });
  await redis.del(outbox.listKey(`{u:${user}}`));
  return { root, redis, keys, outbox, index, checkpoints, user, moved: false };
}

/** The Redis CPU (ms) of each step of one round on build b. */
async function round(b, n) {
  const { index, checkpoints, user, redis, keys } = b;
  const out = {};
  const step = async (name, f) => {
    if (CALLGRIND) {
      out[name] = await instructions(redis, f);
      return;
    }
    const t = cpu();
    await f();
    out[name] = cpu() - t;
  };
  await step('list (ZRANGEBYLEX)', () => redis.zrangebylex(`${keys.prefix(user)}z`, '[/files/t/', '(/files/t0'));
  await step('move', () => index.move(user, { op: 'move', from: '/files/t', to: '/files/u', mode: 'error', uuidPath: '', event }));
  await index.move(user, { op: 'move', from: '/files/u', to: '/files/t', mode: 'error', uuidPath: '', event });
  await step('delete (recursive)', () => index.delete(user, '/files/t', true, event));
  await step('restore (recursive)', () => index.restoreTree(user, { path: '/files/t', event }));
  const id = `ckp_${randomBytes(16).toString('hex')}`;
  await step('checkpoint', () => checkpoints.create(user, { checkpointId: id, path: '/files/t', label: '', max: 100 }));
  await step('checkpoint delete', () => checkpoints.delete(user, id));
  const base = `ckp_${randomBytes(16).toString('hex')}`;
  await checkpoints.create(user, { checkpointId: base, path: '/files/t', label: '', max: 100 });
  for (let i = 0; i < 250; i++) {
    const dir = (k) => `/files/t/d${pad(k % FOLDERS)}`;
    await index.commit(user, { path: `${dir(i)}/f${pad(i % 100)}.txt`, mode: 'overwrite', uuidPath: '', entry: entry(`r${n}-${i}`), uploadId: '', event, quotaBytes: 0 });
    await index.commit(user, { path: `${dir(i)}/new-${n}-${i}.txt`, mode: 'error', uuidPath: '', entry: entry(`n${n}-${i}`), uploadId: '', event, quotaBytes: 0 });
    await index.delete(user, `${dir(i + 50)}/f${pad((i + 1) % 100)}.txt`, false, event).catch(() => {});
    await index.move(user, { op: 'move', from: `${dir(i + 7)}/f${pad((i * 3 + 2) % 100)}.txt`, to: `/files/t/moved-${n}-${i}.txt`, mode: 'error', uuidPath: '', event }).catch(() => {});
  }
  await step('rewind (1,000 changes)', () =>
    checkpoints.rewind(user, { path: '/files/t', state: { checkpointId: base }, checkpointId: `ckp_${randomBytes(16).toString('hex')}`, label: '', max: 100, event, to: base }),
  );
  await redis.del(b.index.keys.prefix(user) + 'log');
  return out;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
if (SIZES.length) await bounds();

const opened = [];
for (const root of builds) opened.push(await open(root));
const results = opened.map(() => []);
for (let n = 0; n < ROUNDS; n++) for (let i = 0; i < opened.length; i++) results[i].push(await round(opened[i], n));

// The least of the rounds beside the median: what a busy machine adds to a step (waiting for a
// core, caches another process emptied) only ever adds, so the minimum moves least between runs.
console.log(`Redis ${CALLGRIND ? 'instructions' : 'CPU'} per step (${CALLGRIND ? 'millions' : 'ms'}: median / least of ${ROUNDS} rounds), a tree of ${FOLDERS * 100} files:`);
const steps = Object.keys(results[0][0]);
console.log(['step', ...opened.map((b) => b.root)].join(' | '));
for (const s of steps) console.log([s, ...results.map((r) => `${median(r.map((x) => x[s]))} / ${Math.min(...r.map((x) => x[s]))}`)].join(' | '));
for (const b of opened) await b.redis.quit();
server.kill();
process.exit(0);

/** The longest command Redis ran while f ran, in ms (SLOWLOG: every command is logged). */
async function longest(redis, f) {
  await redis.slowlog('RESET');
  await f();
  const log = await redis.slowlog('GET', 1024);
  return Math.max(0, ...log.filter((e) => String(e[3][0]).toLowerCase() !== 'slowlog').map((e) => Number(e[2]))) / 1000;
}

/** COMPARE_SIZES: the longest Redis step of each tree operation at each size, then exit. */
async function bounds() {
  const rows = [];
  for (const size of SIZES) {
    // Folders of 99 files: each folder is an entry too, 100 a folder.
    const folders = Math.round(size / 100);
    const sides = [];
    for (const root of builds) {
      const before = await memory();
      const b = await open(root, folders, 99);
      const entries = await b.redis.zlexcount(`${b.keys.prefix(b.user)}z`, '[/files/t/', '(/files/t0');
      sides.push({ ...b, entries, perEntry: ((await memory()) - before) / entries });
    }
    const results = sides.map(() => []);
    for (let n = 0; n < ROUNDS; n++) for (let i = 0; i < sides.length; i++) results[i].push(await boundsRound(sides[i], n));
    for (let i = 0; i < sides.length; i++) {
      for (const step of Object.keys(results[i][0])) {
        const ms = results[i].map((r) => r[step]);
        rows.push({ build: sides[i].root, size, entries: sides[i].entries, step, median: median(ms), max: Math.max(...ms), perEntry: sides[i].perEntry });
      }
      await sides[i].redis.quit();
    }
    await flush();
  }
  console.log(`The longest single Redis command of each step (ms: median / most of ${ROUNDS} rounds), trees of folders of 99 files:`);
  for (const root of builds) {
    if (builds.length > 1) console.log(root);
    const mine = rows.filter((r) => r.build === root);
    const at = (step, size) => mine.find((r) => r.step === step && r.size === size);
    console.log(['step', ...SIZES.map((size) => `${at(mine[0].step, size).entries} entries`)].join(' | '));
    for (const step of [...new Set(mine.map((r) => r.step))]) console.log([step, ...SIZES.map((size) => `${Math.round(at(step, size).median)} / ${Math.round(at(step, size).max)}`)].join(' | '));
    console.log(['Redis memory per entry (bytes)', ...SIZES.map((size) => Math.round(at(mine[0].step, size).perEntry))].join(' | '));
  }
  server.kill();
  process.exit(0);
}

/** A connection of its own for the whole server (INFO, FLUSHALL). */
async function admin(f) {
  const { createRedis } = await import(`${builds[0]}/packages/platform/dist/index.js`);
  const redis = createRedis({ url: `redis://127.0.0.1:${port}` });
  try {
    return await f(redis);
  } finally {
    await redis.quit();
  }
}
function memory() {
  return admin(async (redis) => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))[1]));
}
function flush() {
  return admin((redis) => redis.flushall());
}

/** One round of every tree operation on the tree at /files/t, each step's longest command (ms); the tree is whole again after it. */
async function boundsRound(b, n) {
  const { index, checkpoints, user, redis } = b;
  const out = {};
  const step = async (name, f) => (out[name] = await longest(redis, f));
  const ckp = () => `ckp_${randomBytes(16).toString('hex')}`;
  await step('list (ZRANGEBYLEX, for scale)', () => redis.zrangebylex(`${b.keys.prefix(user)}z`, '[/files/t/', '(/files/t0'));
  const base = ckp();
  await step('checkpoint', () => checkpoints.create(user, { checkpointId: base, path: '/files/t', label: '', max: 100 }));
  await step('copy', () => index.move(user, { op: 'copy', from: '/files/t', to: `/files/c${n}`, mode: 'error', uuidPath: '', event }));
  await step('purge (recursive)', () => index.purge(user, `/files/c${n}`, true, event));
  await step('move', () => index.move(user, { op: 'move', from: '/files/t', to: '/files/u', mode: 'error', uuidPath: '', event }));
  await index.move(user, { op: 'move', from: '/files/u', to: '/files/t', mode: 'error', uuidPath: '', event });
  await step('delete (recursive)', () => index.delete(user, '/files/t', true, event));
  await step('restore (recursive)', () => index.restoreTree(user, { path: '/files/t', event }));
  await step('fork (of a checkpoint)', () => checkpoints.fork(user, { from: '/files/t', to: `/files/f${n}`, mode: 'error', uuidPath: '', state: { checkpointId: base }, event, ifMatch: '', ifMatchTo: '' }));
  await index.purge(user, `/files/f${n}`, true, event);
  // Rewinds that bring every file back (the most they do): to the checkpoint, and to a time.
  await index.delete(user, '/files/t', true, event);
  const undo = ckp();
  await step('rewind (to a checkpoint)', () => checkpoints.rewind(user, { path: '/files/t', state: { checkpointId: base }, checkpointId: undo, label: '', max: 100, event, to: base }));
  await sleep(5);
  const at = Date.now();
  await sleep(5);
  await index.delete(user, '/files/t', true, event);
  const undo2 = ckp();
  await step('rewind (to a time)', () => checkpoints.rewind(user, { path: '/files/t', state: { at }, checkpointId: undo2, label: '', max: 100, event, to: String(at) }));
  await step('checkpoint delete', () => checkpoints.delete(user, base));
  for (const id of [undo, undo2]) await checkpoints.delete(user, id);
  // The changes feed and the outbox are the relay's: not kept between rounds.
  await redis.del(`${b.keys.prefix(user)}log`, b.outbox.listKey(`{u:${user}}`));
  return out;
}
