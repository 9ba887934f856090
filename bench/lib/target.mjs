// The system under test: a stack the bench launches (every built service as a real process on
// random ports, against the backends resolveInfra finds), or one given by BENCH_URL.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { launchStack, mintToken, resolveInfra } from '@workspace/testkit';
import { BENCH_MAX_TREE_ENTRIES } from './config.mjs';

const DEFAULT_PART_SIZE = 8 * 1024 * 1024;

/**
 * Stops the bench process from parsing and keeping every log line of the stack (spawnService
 * keeps them all): at thousands of requests a second that would cost the load generator CPU
 * and memory. The processes still log as configured; the lines are just discarded here.
 */
function discardLogs(service) {
  const out = service.child.stdout;
  out?.removeAllListeners('data');
  out?.on('data', () => undefined);
  service.logs.length = 0;
}

/** The pid of this process's child whose command line contains `needle` (the embedded s3rver), if any. */
function childPid(needle) {
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const ppid = readFileSync(`/proc/${entry}/status`, 'utf8').match(/^PPid:\s+(\d+)/m)?.[1];
      if (Number(ppid) === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) return Number(entry);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return undefined;
}

/**
 * BENCH_CPU_PROF=gateway,files profiles those processes (see cpu-profile.mjs); the profiles land
 * in <results>/profiles when they exit at the end of the run (`floor`: the Agent floors' two
 * processes, when each floor stops). Combine with BENCH_ONLY.
 */
function profilingEnv(env, resultsDir) {
  const wanted = (env.BENCH_CPU_PROF ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (wanted.length === 0) return {};
  const dir = resolve(resultsDir, 'profiles');
  mkdirSync(dir, { recursive: true });
  const preload = new URL('./cpu-profile.mjs', import.meta.url).href;
  return Object.fromEntries(wanted.map((service) => [service, { NODE_OPTIONS: `--import=${preload}`, BENCH_CPU_PROF_DIR: dir }]));
}

/**
 * BENCH_SERVICE_ENV='{"gateway":{"LOG_LEVEL":"warn"}}' adds settings to launched services, to
 * measure what a setting costs (the results carry it in their `scale` line's environment note).
 */
function serviceEnv(env, profiling) {
  const extra = env.BENCH_SERVICE_ENV ? JSON.parse(env.BENCH_SERVICE_ENV) : {};
  const merged = { ...profiling, files: { ...profiling.files, MAX_TREE_ENTRIES: String(BENCH_MAX_TREE_ENTRIES) } };
  for (const [service, vars] of Object.entries(extra)) merged[service] = { ...merged[service], ...vars };
  return merged;
}

/**
 * {url, token(sub), pids?: {gateway, files, agents, …}, metricsUrls?: {gateway, …}, s3?: S3Endpoint, serviceBucket?, partSize, mode, floorEnv?, stop()}.
 */
export async function openTarget({ env = process.env, resultsDir }) {
  if (env.BENCH_URL) {
    if (!env.BENCH_SECRET) throw new Error('BENCH_URL needs BENCH_SECRET (the HS256 secret the gateway verifies tokens with)');
    const s3 = env.S3_ENDPOINT
      ? { endpoint: env.S3_ENDPOINT, accessKey: env.S3_ACCESS_KEY ?? 'minioadmin', secretKey: env.S3_SECRET_KEY ?? 'minioadmin', region: env.S3_REGION ?? 'us-east-1' }
      : undefined;
    return {
      mode: 'url',
      url: env.BENCH_URL.replace(/\/$/, ''),
      token: (sub) => mintToken({ secret: env.BENCH_SECRET, sub, issuer: env.BENCH_ISSUER, audience: env.BENCH_AUDIENCE, expiresIn: 3 * 3600 }),
      pids: undefined,
      metricsUrls: undefined,
      s3Pid: undefined,
      s3,
      redisUrl: env.REDIS_URL,
      serviceBucket: env.S3_BUCKET,
      partSize: Number(env.S3_PART_SIZE ?? DEFAULT_PART_SIZE),
      sources: { url: env.BENCH_URL },
      stop: async () => undefined,
    };
  }
  const profiling = profilingEnv(env, resultsDir);
  const infra = await resolveInfra(env);
  const secret = randomBytes(24).toString('base64url');
  let stack;
  try {
    stack = await launchStack({ infra, secret, envOf: serviceEnv(env, profiling) });
  } catch (err) {
    await infra.stop();
    throw err;
  }
  for (const group of Object.values(stack.replicas)) for (const service of group) discardLogs(service);
  return {
    mode: 'launched',
    /** The environment that profiles the Agent floors' processes (BENCH_CPU_PROF=floor), if asked. */
    floorEnv: profiling.floor ?? {},
    url: stack.gateways[0],
    token: (sub) => mintToken({ secret, sub, expiresIn: 3 * 3600 }),
    pids: Object.fromEntries(Object.entries(stack.replicas).map(([name, group]) => [name, group[0].child.pid])),
    /** Where each process's Prometheus metrics are served (first replicas). */
    metricsUrls: Object.fromEntries(Object.entries(stack.replicas).flatMap(([name, group]) => (group[0].metricsPort ? [[name, `http://127.0.0.1:${group[0].metricsPort}/metrics`]] : []))),
    /** The embedded s3rver (when this run started it), for CPU accounting. */
    s3Pid: infra.sources.s3 === 'embedded' ? childPid('s3rver.mjs') : undefined,
    s3: infra.s3,
    redisUrl: infra.redisCluster ? undefined : infra.redisUrl,
    serviceBucket: stack.envOf.files.S3_BUCKET,
    partSize: Number(stack.envOf.files.S3_PART_SIZE ?? DEFAULT_PART_SIZE),
    sources: infra.sources,
    stop: async () => {
      await stack.stop();
      await infra.stop();
    },
  };
}
