import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, openSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'minio';
import type { S3Handle } from './s3.js';

/** The keys of the user every cluster is given (radosgw-admin creates it with exactly these). */
export const RGW_KEYS = { accessKey: 'RGWTESTACCESSKEY', secretKey: 'rgw-test-secret-key' } as const;

/**
 * The pools radosgw would create on first use, one at a time as they are needed (each costs a
 * stall of ~2 s on the first bucket and the first PUT): created up front instead.
 */
const RGW_POOLS = ['.rgw.root', 'default.rgw.log', 'default.rgw.control', 'default.rgw.meta', 'default.rgw.buckets.index', 'default.rgw.buckets.data', 'default.rgw.buckets.non-ec'];

/** Ports taken by one cluster: the mon (v2, v1), the daemons' bind range, radosgw's HTTP. */
const PORT_BLOCK = 16;

export interface RgwHandle extends S3Handle {
  /** Milliseconds from the call to S3 answering with the user's keys. */
  startupMs: number;
  /** The cluster's folder (config, mon store, logs); removed by `stop`. */
  dir: string;
}

export interface RgwOptions {
  /** The whole start-up, every step included; default 90 s. */
  timeoutMs?: number;
}

/** A daemon that exited while the cluster started, or a port another process took first. */
class StartFailed extends Error {
  constructor(
    message: string,
    readonly portTaken: boolean,
    /** The message ends with the logs' tails already. */
    readonly withLogs = false,
  ) {
    super(message);
  }
}

/**
 * A one-node Ceph cluster serving S3: a mon, one OSD on memstore (objects live in its RAM) and
 * radosgw (beast) on loopback, all under a fresh temporary folder with free ports, with one
 * user whose keys are RGW_KEYS. Resolves once S3 answers a signed request. A strict S3: it
 * refuses what s3rver lets pass (small non-last parts, PUTs without a length). `stop` kills
 * every daemon and removes the folder. Needs Debian's `ceph-mon ceph-osd radosgw ceph-common`.
 * A failure says which step failed, with the tail of every daemon's log.
 */
export async function startRgw(options: RgwOptions = {}): Promise<RgwHandle> {
  const missing = ['ceph-mon', 'ceph-osd', 'radosgw', 'radosgw-admin', 'ceph', 'ceph-authtool', 'monmaptool'].filter((bin) => !onPath(bin));
  if (missing.length > 0) {
    throw new Error(`S3_BACKEND=rgw needs Ceph's binaries (missing: ${missing.join(', ')}): apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw ceph-common`);
  }
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(started, options.timeoutMs ?? 90_000);
    } catch (err) {
      // A port picked free and taken by another process before the daemon bound it: new ports.
      if (attempt >= 3 || !(err instanceof StartFailed && err.portTaken)) throw err;
    }
  }
}

function onPath(bin: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Daemons are started under `setpriv --pdeathsig KILL` when it exists: a test run killed
 * outright leaves none behind (the signal comes when the thread that started them ends).
 */
const PDEATHSIG = onPath('setpriv') && spawnSync('setpriv', ['--pdeathsig', 'KILL', 'true'], { stdio: 'ignore' }).status === 0;

async function startOnce(started: number, timeoutMs: number): Promise<RgwHandle> {
  const dir = await mkdtemp(join(tmpdir(), 'rgw-'));
  const logDir = join(dir, 'log');
  await Promise.all(['run', 'log', 'mon', 'osd/0', 'rgw'].map((d) => mkdir(join(dir, d), { recursive: true })));
  const ports = await portBlock(PORT_BLOCK);
  const [monPort, monV1Port] = ports;
  const httpPort = ports[PORT_BLOCK - 1]!;
  const fsid = randomUUID();
  const osdUuid = randomUUID();
  const conf = join(dir, 'ceph.conf');
  const monAddrs = `[v2:127.0.0.1:${monPort},v1:127.0.0.1:${monV1Port}]`;
  await writeFile(conf, cephConf({ dir, fsid, monAddrs, bindMin: ports[2]!, bindMax: ports[PORT_BLOCK - 2]!, httpPort }));

  const env = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', CEPH_CONF: conf, HOME: dir };
  const abort = new AbortController();
  const daemons: { name: string; child: ChildProcess }[] = [];
  let state: 'starting' | 'running' | 'stopped' = 'starting';
  let failDaemon!: (err: StartFailed) => void;
  const daemonDied = new Promise<never>((_, reject) => (failDaemon = reject));
  daemonDied.catch(() => undefined);
  const deadline = sleep(timeoutMs - (Date.now() - started), undefined, { signal: abort.signal, ref: false }).then(() => {
    throw new StartFailed(`not ready within ${timeoutMs} ms`, false);
  });
  deadline.catch(() => undefined);
  const guard = <T>(step: Promise<T>) => Promise.race([step, daemonDied, deadline]);

  // A process that exits without calling `stop` (an uncaught error) leaves no daemon or folder behind.
  const killAll = () => {
    for (const { child } of daemons) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', killAll);

  const daemon = (name: string, file: string, args: string[]) => {
    const out = openSync(join(logDir, `${name}.out`), 'a');
    const argv = PDEATHSIG ? ['setpriv', ['--pdeathsig', 'KILL', '--', file, ...args]] as const : [file, args] as const;
    const child = spawn(argv[0], [...argv[1]], { env, stdio: ['ignore', out, out] });
    closeSync(out);
    daemons.push({ name, child });
    child.once('exit', (code, signal) => {
      if (state === 'starting') {
        void logTails(logDir).then((tails) => failDaemon(new StartFailed(`${name} exited with ${code ?? signal}\n${tails}`, /Address already in use|unable to bind/i.test(tails), true)));
      } else if (state === 'running') {
        void logTails(logDir).then((tails) => console.error(`rgw cluster in ${dir}: ${name} (pid ${child.pid}) exited unexpectedly with ${code ?? signal}\n${tails}`));
      }
    });
  };
  const ceph = (file: string, args: string[], input?: string) => guard(command(file, args, { env, input, signal: abort.signal }));

  const stop = async () => {
    if (state === 'stopped') return;
    state = 'stopped';
    abort.abort();
    process.removeListener('exit', killAll);
    // Killed outright: memstore would write every object to the folder on a clean shutdown.
    await Promise.all(
      daemons.map(async ({ child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }),
    );
    await rm(dir, { recursive: true, force: true });
  };

  let step = 'the monitor';
  try {
    const keyring = join(dir, 'keyring');
    const monmap = join(dir, 'monmap');
    await ceph('ceph-authtool', ['--create-keyring', keyring, '--gen-key', '-n', 'mon.', '--cap', 'mon', 'allow *']);
    await ceph('monmaptool', ['--create', '--fsid', fsid, '--addv', 'a', monAddrs, monmap]);
    await ceph('ceph-mon', ['--mkfs', '-i', 'a', '--monmap', monmap, '--keyring', keyring]);
    daemon('mon.a', 'ceph-mon', ['-f', '-i', 'a']);

    step = 'the OSD';
    // Waits for the mon to form its quorum of one; then the OSD (id 0 in a new cluster).
    const id = (await ceph('ceph', ['--connect-timeout', '30', 'osd', 'new', osdUuid, '0'])).stdout.trim();
    if (id !== '0') throw new Error(`osd new answered ${JSON.stringify(id)}, expected 0`);
    await ceph('ceph-osd', ['-i', '0', '--mkfs', '--osd-uuid', osdUuid]);
    daemon('osd.0', 'ceph-osd', ['-f', '-i', '0']);

    step = 'the rgw pools';
    // One `ceph` process for every command (its start-up costs more than a command).
    const script = RGW_POOLS.flatMap((pool) => [`osd pool create ${pool} 8 8`, `osd pool application enable ${pool} rgw`]).join('\n');
    // It goes on after a command that fails (and exits 0): its errors are read from stderr.
    const { stderr } = await ceph('ceph', ['--connect-timeout', '30'], `${script}\n`);
    const refused = stderr.split('\n').filter((line) => /^Error /.test(line));
    if (refused.length > 0) throw new Error(refused.join('\n'));

    step = 'the S3 user';
    // Waits for the OSD to serve its placement groups (the user is written to the pools).
    await ceph('radosgw-admin', ['user', 'create', '--uid', 'test', '--display-name', 'test', '--access-key', RGW_KEYS.accessKey, '--secret', RGW_KEYS.secretKey]);

    step = 'radosgw';
    daemon('rgw.x', 'radosgw', ['-f', '-n', 'client.rgw.x']);
    const endpoint = `http://127.0.0.1:${httpPort}`;
    await guard(untilS3Answers(endpoint, abort.signal));
    state = 'running';
    abort.abort(); // the deadline
    return { s3: { endpoint, region: 'us-east-1', ...RGW_KEYS }, startupMs: Date.now() - started, dir, stop };
  } catch (err) {
    const portTaken = err instanceof StartFailed && err.portTaken;
    const why = err instanceof StartFailed && err.withLogs ? err.message : `${(err as Error).message}\n${await logTails(logDir)}`;
    await stop();
    throw new StartFailed(`the rgw cluster did not start (${step}; its folder was ${dir}): ${why}`, portTaken, true);
  }
}

function cephConf(o: { dir: string; fsid: string; monAddrs: string; bindMin: number; bindMax: number; httpPort: number }): string {
  const { dir } = o;
  return `[global]
fsid = ${o.fsid}
mon host = ${o.monAddrs}
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = 4294967296
osd max object name len = 2048
paxos propose interval = 0.1
ms bind port min = ${o.bindMin}
ms bind port max = ${o.bindMax}
run dir = ${dir}/run
pid file = ${dir}/run/$name.pid
admin socket = ${dir}/run/$name.asok
log file = ${dir}/log/$name.log
keyring = ${dir}/keyring
mon data = ${dir}/mon/$id
osd data = ${dir}/osd/$id
mon data avail warn = 1
mon data avail crit = 0

[client]
# Without it radosgw cannot reach the mon with auth none, and retries forever
# ("get_initial_auth_request returned -13").
ms mon client mode = crc secure
# One per process would be shared by every ceph command; none is needed.
admin socket =

[client.rgw.x]
rgw data = ${dir}/rgw
rgw frontends = beast endpoint=127.0.0.1:${o.httpPort}
`;
}

/** Runs a command to its end; resolves with what it printed, rejects with that on failure. */
function command(file: string, args: string[], o: { env: NodeJS.ProcessEnv; input?: string | undefined; signal: AbortSignal }): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: o.env, signal: o.signal, killSignal: 'SIGKILL', stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Error(`${file} ${args.join(' ')} exited with ${code ?? signal}: ${`${stdout}\n${stderr}`.trim().slice(-2000)}`));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(o.input ?? '');
  });
}

/** Polls with a signed request (the user's keys) until radosgw answers it. */
async function untilS3Answers(endpoint: string, signal: AbortSignal): Promise<void> {
  const url = new URL(endpoint);
  const client = new Client({ endPoint: url.hostname, port: Number(url.port), useSSL: false, region: 'us-east-1', pathStyle: true, ...RGW_KEYS });
  for (;;) {
    signal.throwIfAborted();
    try {
      await client.listBuckets();
      return;
    } catch {
      await sleep(50, undefined, { signal });
    }
  }
}

/** The last lines of every log in the cluster's log folder. */
async function logTails(logDir: string, lines = 20): Promise<string> {
  const names = (await readdir(logDir).catch(() => [] as string[])).sort();
  const tails = await Promise.all(
    names.map(async (name) => {
      const text = (await readFile(join(logDir, name), 'utf8').catch(() => '')).trimEnd();
      if (!text) return '';
      return `--- ${name} (last ${lines} lines) ---\n${text.split('\n').slice(-lines).join('\n')}`;
    }),
  );
  return tails.filter(Boolean).join('\n');
}

/** `count` consecutive loopback ports, all free now (held together while checked), below the ephemeral range. */
async function portBlock(count: number): Promise<number[]> {
  for (;;) {
    const base = 10_000 + Math.floor(Math.random() * (32_000 - 10_000 - count));
    const ports = Array.from({ length: count }, (_, i) => base + i);
    const held: Server[] = [];
    let free = true;
    for (const port of ports) {
      const server = createServer();
      const bound = await new Promise<boolean>((resolve) => {
        server.once('error', () => resolve(false));
        server.listen(port, '127.0.0.1', () => resolve(true));
      });
      if (!bound) {
        free = false;
        break;
      }
      held.push(server);
    }
    await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))));
    if (free) return ports;
  }
}
