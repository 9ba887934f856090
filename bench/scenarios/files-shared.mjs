// What the files scenarios share: number formats, the pids whose CPU counts, RSS, CPU sums,
// latency loops.
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { MiB } from '../lib/config.mjs';
import { cpuMeter, cpuPer } from '../lib/cpu.mjs';
import { startFilesFloor } from '../lib/floor-files.mjs';
import { httpRequest, latencyLoop, quantile } from '../lib/http.mjs';

export const fmt = (n, digits = 1) => (n === null || n === undefined || Number.isNaN(n) ? 'n/a' : Number(n).toFixed(digits));
export const mibps = (bytes, ms) => bytes / MiB / (ms / 1000);
export const sizeLabel = (bytes) => (bytes >= MiB ? `${fmt(bytes / MiB, 0)} MiB` : `${fmt(bytes / 1024, 0)} KiB`);
export const q = encodeURIComponent;

/** Resident set size of a process in bytes (VmRSS in /proc/<pid>/status). */
export function rss(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line?.match(/(\d+)/)?.[1] ?? 0) * 1024;
}

/** The embedded S3 server's pid, when known. */
export const s3Pid = (ctx) => (ctx.target.s3Pid ? { s3: ctx.target.s3Pid } : {});
/** The gateway's, the files service's and the S3 server's pids (launched stack), for CPU accounting. */
export const transferPids = (ctx) => ({ ...(ctx.target.pids && { gateway: ctx.target.pids.gateway, files: ctx.target.pids.files }), ...s3Pid(ctx) });
/** Every process of the launched stack and the S3 server. */
export const stackPids = (ctx) => ({ ...ctx.target.pids, ...s3Pid(ctx) });

/** Sums what cpuMeter results say, name by name. */
export function addCpu(total, cpu) {
  for (const [name, ms] of Object.entries(cpu)) total[name] = (total[name] ?? 0) + ms;
  return total;
}

/** CPU ms of the gateway and the files service together per `count` (undefined when not measured). */
export function gatewayFilesPer(cpu, count) {
  if (cpu.gateway === undefined || cpu.files === undefined || !count) return undefined;
  return (cpu.gateway + cpu.files) / count;
}

/** latencyLoop with the CPU the stack spent on it: {samples, p50, p99, cpu}. */
export async function measuredLoop(ctx, url, headers, opts) {
  const meter = cpuMeter(stackPids(ctx));
  const loop = await latencyLoop(url, headers, opts);
  return { ...loop, cpu: meter() };
}

/** GET `url` as `user`, expecting 200 JSON; the parsed body and the response. */
export async function getJson(url, user) {
  const res = await httpRequest(url, { headers: { authorization: `Bearer ${user.token}` } });
  let body;
  try {
    body = JSON.parse(res.text);
  } catch {
    body = undefined;
  }
  if (res.status !== 200) throw new Error(`GET ${url.replace(/^https?:\/\/[^/]+/, '')}: HTTP ${res.status} ${String(res.text).slice(0, 200)}`);
  return { body, res };
}

/**
 * Runs `fn` (resolving with ms) one call at a time for at least `seconds` and `minSamples` calls,
 * unless `maxSeconds` passed (then what was measured, at least one): {samples, p50, p99}.
 */
export async function timedLoop(fn, { seconds, minSamples, maxSeconds = Infinity }) {
  const samples = [];
  const started = performance.now();
  const elapsedS = () => (performance.now() - started) / 1000;
  while ((samples.length < minSamples || elapsedS() < seconds) && !(samples.length > 0 && elapsedS() >= maxSeconds)) samples.push(await fn());
  return { samples: samples.length, p50: quantile(samples, 0.5), p99: quantile(samples, 0.99) };
}

/**
 * Runs `step` (resolving with {ms}) as `user`; where Redis's SLOWLOG can be read, `redisMs` is
 * how long Redis ran the logged commands on that user's keys meanwhile (lib/redis-slowlog.mjs).
 */
export async function redisTimed(ctx, user, step) {
  const slowlog = await ctx.slowlog();
  if (!slowlog) return { ...(await step()), redisMs: undefined };
  const { out, redisMs } = await slowlog.step(user.sub, step);
  return { ...out, redisMs };
}

/** "Redis itself ran it for p50 … ms" of the `redisMs` of steps, or '' when none was measured. */
export function redisNote(steps) {
  const ms = steps.map((s) => s.redisMs).filter((m) => m !== undefined);
  if (ms.length === 0) return '';
  return ` Of which Redis ran the step's Lua for p50 ${fmt(quantile(ms, 0.5))} ms (its SLOWLOG: commands on this user's keys slower than 10 ms).`;
}

/**
 * The files floor's listing of `path` as `user` (lib/floor-files.mjs: one ZRANGEBYLEX of the
 * same set, the same JSON, from one bare process), timed like the system's:
 * {samples, p50, p99, cpu: {floor, redis?}, bytes}, or undefined where there is no floor.
 */
export async function floorListLoop(ctx, user, { path, recursive = false, limit = 0, after = '' }, opts) {
  const floor = await startFilesFloor(ctx);
  if (!floor) return undefined;
  const url = `${floor.url}/list/${encodeURIComponent(user.sub)}?path=${q(path)}&recursive=${recursive}${limit ? `&limit=${limit}` : ''}${after ? `&after=${q(after)}` : ''}`;
  const probe = await httpRequest(url);
  if (probe.status !== 200) throw new Error(`floor list ${path}: HTTP ${probe.status}`);
  const meter = cpuMeter({ floor: floor.pid });
  const loop = await latencyLoop(url, {}, opts);
  return { ...loop, cpu: meter(), bytes: probe.bytes };
}

/** One step of the files floor (POST /<op>/:user with `body`) as `user`: {ms, body}; throws unless 200. */
export async function floorStep(ctx, op, user, body) {
  const floor = await startFilesFloor(ctx);
  const res = await httpRequest(`${floor.url}/${op}/${encodeURIComponent(user.sub)}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 200) throw new Error(`floor ${op}: HTTP ${res.status} ${String(res.text).slice(0, 200)}`);
  return { ms: res.ms, body: JSON.parse(res.text) };
}

/** "Floor: …" of a floor loop or steps, for the notes. */
export function floorNote(what, loop, count, unit) {
  if (!loop) return ' No floor: the bench cannot reach the stack\'s Redis (BENCH_URL without REDIS_URL, or a Redis Cluster).';
  return ` Floor: ${what}, p50 ${fmt(loop.p50)} ms, p99 ${fmt(loop.p99)} ms over ${count}, ${cpuPer(loop.cpu, count, unit)}.`;
}
