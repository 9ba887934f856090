// What the shapes of a config commit cost the client (ioredis, as every service uses it): the CPU
// this process spends per operation, for a plain command, a pipeline of one, the four reads a
// PATCH makes after WATCH sent one by one or as one pipeline with the WATCH, a MULTI/EXEC of
// seven writes, and one EVALSHA doing the same seven writes. Each shape runs with 1 and with 32
// operations in flight (a busy service), in alternating rounds, so this shared machine's noise
// falls on all of them alike.
//
// Run from the repository root with Redis at REDIS_URL (default redis://127.0.0.1:6379):
//   node bench/compare/redis-commands.mjs
// Knobs: COMPARE_OPS (10000 per measurement), COMPARE_ROUNDS (3).
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../services/agents/package.json', import.meta.url));
const { Redis } = require('ioredis');

const OPS = Number(process.env.COMPARE_OPS ?? 10_000);
const ROUNDS = Number(process.env.COMPARE_ROUNDS ?? 3);
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const tag = `{bench-cmd-${randomBytes(4).toString('hex')}}`;
const k = (name) => `${tag}:${name}`;
const SEVEN = `redis.call('SET', KEYS[1], ARGV[1]) redis.call('ZADD', KEYS[2], 1, 'a') redis.call('HSET', KEYS[3], 'a', '1', 'b', '2')
redis.call('RPUSH', KEYS[4], 'x') redis.call('SADD', KEYS[5], 'a') redis.call('HSET', KEYS[6], 'f', 'v') redis.call('LREM', KEYS[4], 1, 'x') return 1`;
redis.defineCommand('benchSeven', { numberOfKeys: 6, lua: SEVEN });
await redis.hset(k('agent'), { currentConfigId: 'cfg_1', name: 'x'.repeat(64), description: 'y'.repeat(200) });

const shapes = {
  'plain command': () => redis.lrem(k('list'), 1, 'x'),
  'pipeline of one': () => redis.pipeline().lrem(k('list'), 1, 'x').exec(),
  'WATCH + 4 reads, one by one': (conn) =>
    Promise.all([conn.watch(k('agent')), conn.hgetall(k('agent')), conn.zrange(k('configs'), 0, -1), conn.hgetall(k('pins')), conn.sismember(k('docs'), 'a')]).then(() => conn.unwatch()),
  'WATCH + 4 reads, one pipeline': (conn) =>
    conn.pipeline().watch(k('agent')).hgetall(k('agent')).zrange(k('configs'), 0, -1).hgetall(k('pins')).sismember(k('docs'), 'a').exec().then(() => conn.unwatch()),
  'MULTI/EXEC of 7 writes': () =>
    redis.multi().set(k('config'), '1').zadd(k('configs'), 1, 'a').hset(k('agent2'), { a: '1', b: '2' }).rpush(k('list'), 'x').sadd(k('docs'), 'a').hset(k('h'), 'f', 'v').lrem(k('list'), 1, 'x').exec(),
  'EVALSHA of the same 7': () => redis.benchSeven(k('config'), k('configs'), k('agent2'), k('list'), k('docs'), k('h'), '1'),
};

/** WATCH belongs to a connection: each in-flight WATCH shape gets its own. */
const conns = await Promise.all(Array.from({ length: 32 }, async () => redis.duplicate()));

async function measure(fn, inFlight) {
  let next = 0;
  const worker = async (conn) => {
    while (next < OPS) {
      next++;
      await fn(conn);
    }
  };
  const cpu = process.cpuUsage();
  await Promise.all(conns.slice(0, inFlight).map(worker));
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / OPS;
}

const results = new Map();
for (let round = 0; round < ROUNDS; round++) {
  const order = Object.entries(shapes);
  if (round % 2) order.reverse();
  for (const [name, fn] of order) {
    for (const inFlight of [1, 32]) {
      const key = `${name} @${inFlight}`;
      const cpuUs = await measure(fn, inFlight);
      results.set(key, [...(results.get(key) ?? []), cpuUs]);
    }
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`client CPU µs per operation (median of ${ROUNDS} rounds of ${OPS}; range)`);
for (const [key, xs] of results) console.log(`  ${key.padEnd(36)} ${median(xs).toFixed(1).padStart(6)}  (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`);

await redis.del(...['agent', 'agent2', 'config', 'configs', 'pins', 'docs', 'list', 'h'].map(k));
for (const c of conns) c.disconnect();
redis.disconnect();
