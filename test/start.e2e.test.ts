import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { mintToken, newUserId } from '@workspace/testkit';
import { upload } from './support/files.js';
import { freePort } from './support/private-servers.js';
import { alive } from './support/processes.js';
import { request, type ApiUser } from './support/stack.js';

/**
 * `npm start` itself (scripts/start.mjs, without npm in front), on free ports, a temporary
 * DATA_DIR and its own embedded s3rver, against the tests' Redis and NATS: processes killed
 * with SIGKILL come back and requests succeed again; SIGTERM leaves no process behind.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const infra = inject('infra');
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Pids of the live (not zombie) processes whose parent is `parent`, with their command lines (Linux: /proc). */
function childrenOf(parent: number): Map<number, string> {
  const found = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) === parent && state !== 'Z') found.set(Number(entry), readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' '));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Every live descendant of `root`, by pid (Linux: /proc). */
function descendantsOf(root: number): Set<number> {
  const found = new Set<number>();
  for (let frontier = [root]; frontier.length > 0; ) {
    frontier = frontier.flatMap((pid) => [...childrenOf(pid).keys()]).filter((pid) => !found.has(pid));
    for (const pid of frontier) found.add(pid);
  }
  return found;
}

/** The environment of a stack of `npm start` on free ports, against the tests' Redis and NATS. */
async function stackEnv(dataDir: string): Promise<Record<string, string | undefined>> {
  const [port, ...grpc] = await Promise.all(Array.from({ length: 6 }, freePort));
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    PROJECTS_ADDR: `127.0.0.1:${grpc[0]}`,
    FILES_ADDR: `127.0.0.1:${grpc[1]}`,
    AGENTS_ADDR: `127.0.0.1:${grpc[2]}`,
    AUTOMATIONS_ADDR: `127.0.0.1:${grpc[3]}`,
    WEBHOOKS_ADDR: `127.0.0.1:${grpc[4]}`,
    REDIS_URL: infra.redisUrl,
    NATS_URL: infra.natsUrl,
    DATA_DIR: dataDir,
  };
  for (const key of ['S3_ENDPOINT', 'AUTH_JWKS_URL', 'AUTH_PUBLIC_KEY', 'AUTH_JWT_SECRET']) delete env[key];
  return env;
}

describe('npm start', () => {
  it.skipIf(infra.topology === 'scaled')(
    'npm start — files and s3rver killed with SIGKILL are restarted with a log line and requests succeed again; SIGTERM stops everything, no process left',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'npm-start-'));
      dirs.push(dataDir);
      const secret = randomBytes(24).toString('base64url');
      const env: Record<string, string | undefined> = { ...(await stackEnv(dataDir)), AUTH_JWT_SECRET: secret };
      const port = Number(env.PORT);
      const grpc = ['PROJECTS_ADDR', 'FILES_ADDR', 'AGENTS_ADDR', 'AUTOMATIONS_ADDR', 'WEBHOOKS_ADDR'].map((k) => Number(env[k]!.split(':')[1]));
      const start = spawn(process.execPath, [join(root, 'scripts/start.mjs')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
      const output: string[] = [];
      for (const stream of [start.stdout, start.stderr]) createInterface({ input: stream }).on('line', (line) => output.push(line));
      const started = new Map<number, string>();
      try {
        await expect.poll(() => output.some((l) => l.startsWith('✓ ready at')), { timeout: 110_000, interval: 200 }).toBe(true);
        // It says which port each process took (as set, its default when free, or picked free), and they all differ.
        const ports = output.find((l) => l.trim().startsWith('ports:'));
        expect(ports).toContain(`gateway ${port} (metrics `);
        expect(ports).toContain(`projects ${grpc[0]} (metrics `);
        const metrics = [...(ports ?? '').matchAll(/metrics (\d+)/g)].map((m) => Number(m[1]));
        expect(metrics).toHaveLength(6);
        expect(new Set([port, ...grpc.slice(0, 5), ...metrics]).size).toBe(12);
        const base = `http://127.0.0.1:${port}`;
        const sub = newUserId();
        const token = await mintToken({ secret, sub });
        const u: ApiUser = {
          sub,
          token,
          request: (method, path, body) =>
            request(`${base}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) }),
        };
        expect((await upload(base, u, { content: 'before' }, { path: '/files/before.txt' })).status).toBe(200);
        const processes = () => {
          const now = childrenOf(start.pid!);
          for (const [pid, cmd] of now) started.set(pid, cmd);
          return now;
        };
        const pidOf = (needle: string) => [...processes()].find(([, cmd]) => cmd.includes(needle))?.[0];

        for (const [name, needle] of [['files', 'services/files/dist/main.js'], ['s3', 'scripts/s3rver.mjs']] as const) {
          const pid = pidOf(needle);
          expect(pid, `${name} runs under npm start`).toBeDefined();
          process.kill(pid!, 'SIGKILL');
          await expect.poll(() => output, { timeout: 10_000, interval: 50 }).toContain(`↻ ${name} exited (SIGKILL); restarting in 0.5 s`);
          await expect.poll(() => pidOf(needle) ?? pid, { timeout: 10_000, interval: 50 }).not.toBe(pid);
          // Requests succeed again: an upload (the files service and s3rver) and a read of the earlier file.
          const path = `/files/after-${name}.txt`;
          await expect.poll(async () => (await upload(base, u, { content: name }, { path })).status, { timeout: 30_000, interval: 200 }).toBe(200);
          const read = await u.request('GET', `/v1/agent/files/read?path=${encodeURIComponent('/files/before.txt')}`);
          expect(read.status, read.text).toBe(200);
          expect(read.body.content).toBe('before');
        }
        const names = [...processes().values()];
        for (const service of ['files', 'projects', 'agents', 'automations', 'webhooks', 'gateway']) expect(names.some((cmd) => cmd.includes(`services/${service}/dist/main.js`)), service).toBe(true);
        expect(output.filter((l) => l.includes('Stopping everything'))).toEqual([]);

        start.kill('SIGTERM');
        const [code] = await once(start, 'exit');
        expect(code, output.slice(-20).join('\n')).toBe(0);
        expect([...started.keys()].filter(alive), 'no process of npm start is left').toEqual([]);
      } finally {
        if (start.exitCode === null && start.signalCode === null) start.kill('SIGKILL');
        for (const pid of started.keys()) if (alive(pid)) process.kill(pid, 'SIGKILL');
      }
    },
    180_000,
  );
  it.skipIf(infra.topology === 'scaled').each(['npm', 'the process group'] as const)(
    'npm start — run by npm with its own DATA_DIR: the banner\'s token command works as printed in another shell, and SIGTERM to %s stops every process',
    async (target) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'npm-start-dir-'));
      dirs.push(dataDir);
      const env = await stackEnv(dataDir);
      // detached: npm leads a process group of its own, as in a terminal.
      const spawned = performance.now();
      const npm = spawn('npm', ['start'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      const output: string[] = [];
      for (const stream of [npm.stdout, npm.stderr]) createInterface({ input: stream }).on('line', (line) => output.push(line));
      const seen = new Set<number>();
      try {
        await expect.poll(() => output.some((l) => l.startsWith('✓ ready at')), { timeout: 110_000, interval: 200 }).toBe(true);
        // Built already (npm test built this clone): the build is cached whole (generated code
        // is no build input), so a second start is ready in seconds, not a rebuild's 86 s.
        expect(performance.now() - spawned).toBeLessThan(20_000);
        // The front door is quiet: no engine warnings of test-only packages.
        expect(output.filter((l) => l.includes('EBADENGINE')), output.join('\n')).toEqual([]);
        const line = output.find((l) => l.trim().startsWith('get a token:'))!;
        const command = /TOKEN=\$\((.*)\)/.exec(line)?.[1];
        expect(command, line).toContain(`DATA_DIR=${dataDir}`);
        // Another shell: neither DATA_DIR nor the stack's settings.
        const shellEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !['DATA_DIR', 'AUTH_JWT_SECRET'].includes(k))) as Record<string, string>;
        const token = execFileSync('sh', ['-c', command!], { cwd: root, env: shellEnv, encoding: 'utf8' }).trim();
        const res = await request(`http://127.0.0.1:${env.PORT}/v1/agent/projects`, { headers: { authorization: `Bearer ${token}` } });
        expect(res.status, res.text).toBe(200);
        for (const pid of descendantsOf(npm.pid!)) seen.add(pid);
        expect(seen.size).toBeGreaterThanOrEqual(8);
        process.kill(target === 'npm' ? npm.pid! : -npm.pid!, 'SIGTERM');
        await once(npm, 'exit');
        await expect.poll(() => [...seen].filter(alive), { timeout: 40_000, interval: 200 }).toEqual([]);
        expect(output.filter((l) => l.includes('Stopping everything') || l.includes('did not stop'))).toEqual([]);
      } finally {
        try {
          process.kill(-npm.pid!, 'SIGKILL');
        } catch {
          // gone
        }
        for (const pid of seen) if (alive(pid)) process.kill(pid, 'SIGKILL');
      }
    },
    180_000,
  );
});
