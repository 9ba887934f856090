// npm start: install what is missing, build, find (or start) Redis and NATS, start every
// service and the gateway, wait until ready, print where it is. A process that exits on its own
// is restarted with backoff (scripts/supervisor.mjs); Ctrl-C / SIGTERM stops all, newest first.
import { createWriteStream, mkdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { build, choosePorts, dataDir, devSecret, ensureInstalled, onPath, root } from './lib.mjs';
import { Supervisor } from './supervisor.mjs';

const env = process.env;
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const NATS_URL = env.NATS_URL ?? 'nats://127.0.0.1:4222';
/** Each process's default ports (services/<name>/src/config.ts), used when free and not set. */
const DEFAULT_PORTS = {
  gateway: { listen: 8080, metrics: 9464 },
  projects: { listen: 50051, metrics: 9465 },
  files: { listen: 50052, metrics: 9466 },
  agents: { listen: 50053, metrics: 9467 },
  automations: { listen: 50054, metrics: 9468 },
  webhooks: { listen: 50055, metrics: 9469 },
};
/** The gateway's port and every service's address, set by the environment or chosen at start (choosePorts). */
let PORT;
const ADDR = {};
/** Each process's metrics port, chosen at start. */
const METRICS = {};

/** The processes of the stack, started in this order and stopped in reverse. */
const SERVICES = [
  { name: 'files', env: () => ({ METRICS_PORT: METRICS.files, GRPC_PORT: port(ADDR.files), GRPC_HOST: '127.0.0.1', REDIS_URL, NATS_URL, ...s3Env }) },
  { name: 'projects', env: () => ({ METRICS_PORT: METRICS.projects, GRPC_PORT: port(ADDR.projects), GRPC_HOST: '127.0.0.1', REDIS_URL, NATS_URL, FILES_ADDR: ADDR.files }) },
  { name: 'agents', env: () => ({ METRICS_PORT: METRICS.agents, GRPC_PORT: port(ADDR.agents), GRPC_HOST: '127.0.0.1', REDIS_URL, NATS_URL, PROJECTS_ADDR: ADDR.projects, FILES_ADDR: ADDR.files }) },
  { name: 'automations', env: () => ({ METRICS_PORT: METRICS.automations, GRPC_PORT: port(ADDR.automations), GRPC_HOST: '127.0.0.1', REDIS_URL, NATS_URL, AGENTS_ADDR: ADDR.agents }) },
  // Development: webhooks may point at this machine (docs/api/webhooks.md#urls-and-ssrf);
  // deployments list no host.
  { name: 'webhooks', env: () => ({ METRICS_PORT: METRICS.webhooks, GRPC_PORT: port(ADDR.webhooks), GRPC_HOST: '127.0.0.1', REDIS_URL, NATS_URL, WEBHOOK_ALLOWED_HOSTS: env.WEBHOOK_ALLOWED_HOSTS ?? '127.0.0.1,localhost' }) },
  {
    name: 'gateway',
    env: () => ({
      PORT,
      METRICS_PORT: METRICS.gateway,
      REDIS_URL,
      AUTH_JWT_SECRET: env.AUTH_JWKS_URL || env.AUTH_PUBLIC_KEY ? env.AUTH_JWT_SECRET ?? '' : devSecret(),
      PROJECTS_ADDR: ADDR.projects,
      AGENTS_ADDR: ADDR.agents,
      FILES_ADDR: ADDR.files,
      AUTOMATIONS_ADDR: ADDR.automations,
      WEBHOOKS_ADDR: ADDR.webhooks,
    }),
  },
];

const supervisor = new Supervisor();
/** S3_* for the files service: the caller's S3_ENDPOINT, or the embedded s3rver's. */
let s3Env = {};

function port(address) {
  return address.slice(address.lastIndexOf(':') + 1);
}

function reachable(url) {
  const { hostname, port: p } = new URL(url);
  return new Promise((resolve) => {
    const s = connect({ host: hostname, port: Number(p) });
    const done = (ok) => (s.destroy(), resolve(ok));
    s.setTimeout(1000, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/**
 * Starts a supervised process (restarted with backoff when it exits on its own) that logs to
 * DATA_DIR/logs/<name>.log; its stderr is also shown here. `childEnv` may be a function, called
 * at every start. `onSpawn` sees each new process.
 */
function startChild(name, cmd, args, childEnv = {}, onSpawn = undefined) {
  const logs = join(dataDir(), 'logs');
  mkdirSync(logs, { recursive: true });
  const out = createWriteStream(join(logs, `${name}.log`), { flags: 'a' });
  return supervisor.start({
    name,
    command: cmd,
    args,
    cwd: root,
    env: () => ({ ...env, ...(typeof childEnv === 'function' ? childEnv() : childEnv) }),
    onSpawn: (child) => {
      child.stdout.pipe(out, { end: false });
      child.stderr.on('data', (chunk) => {
        out.write(chunk);
        process.stderr.write(`[${name}] ${chunk}`);
      });
      onSpawn?.(child);
    },
  });
}

async function waitFor(what, check, timeoutMs) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await sleep(200);
  }
  console.error(`✗ ${what} did not come up within ${timeoutMs / 1000} s`);
  await stopAll(1);
}

/** Uses the backend at `url`, or starts our own under DATA_DIR when it does not answer. */
async function backend(name, url, binary, args, hint) {
  if (await reachable(url)) return console.log(`› ${name}: using ${url}`);
  if (!onPath(binary)) {
    console.error(`✗ ${name} does not answer at ${url} and ${binary} is not on the PATH.\n  ${hint}`);
    process.exit(1);
  }
  console.log(`› ${name}: nothing at ${url}; starting ${binary} under ${dataDir()}`);
  startChild(name, binary, args);
  await waitFor(name, () => reachable(url), 15_000);
}

/**
 * With S3_ENDPOINT set, the files service uses that store (S3_* pass through). Otherwise s3rver
 * runs under DATA_DIR/s3 on a free port (scripts/s3rver.mjs says why it needs the flag).
 */
async function embeddedS3() {
  if (env.S3_ENDPOINT) return console.log(`› s3: using ${env.S3_ENDPOINT}`);
  console.log(`› s3: no S3_ENDPOINT; starting the embedded s3rver under ${dataDir()}`);
  // The first start picks a free port; a restart takes the same one, which the files service uses.
  let s3Port = 0;
  const directory = mkdir('s3');
  await new Promise((resolve) => {
    const s3rverEnv = () => ({ NODE_OPTIONS: '--openssl-legacy-provider', S3RVER_DIRECTORY: directory, S3RVER_PORT: String(s3Port) });
    startChild('s3', process.execPath, [join(root, 'scripts/s3rver.mjs')], s3rverEnv, (child) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (!line.includes('"listening"')) return;
        s3Port = JSON.parse(line).port;
        resolve();
      });
    });
  });
  s3Env = { S3_ENDPOINT: `http://127.0.0.1:${s3Port}`, S3_ACCESS_KEY: 'S3RVER', S3_SECRET_KEY: 'S3RVER' };
}

async function stopAll(code = 0) {
  await supervisor.stop();
  process.exit(code);
}

supervisor.stopOnSignals(0);

ensureInstalled();
console.log('› building…');
build();

const redis = new URL(REDIS_URL);
await backend('redis', REDIS_URL, 'redis-server', ['--port', redis.port || '6379', '--bind', redis.hostname, '--dir', mkdir('redis'), '--appendonly', 'yes', '--appendfsync', 'everysec', '--maxmemory-policy', 'noeviction', '--save', ''],
  'Install it (Debian: apt-get install redis-server) or set REDIS_URL to a running Redis.');
const nats = new URL(NATS_URL);
await backend('nats', NATS_URL, 'nats-server', ['-a', nats.hostname, '-p', nats.port || '4222', '-js', '-sd', mkdir('nats')],
  'Install it (Debian: apt-get install nats-server) or set NATS_URL to a NATS server with JetStream.');
await embeddedS3();

// Every port the stack binds: as set, else the default when free, else one picked free, so
// that two stacks on one machine (another PORT) do not collide.
const ADDR_VARS = { projects: 'PROJECTS_ADDR', files: 'FILES_ADDR', agents: 'AGENTS_ADDR', automations: 'AUTOMATIONS_ADDR', webhooks: 'WEBHOOKS_ADDR' };
const ports = await choosePorts({
  gateway: { given: env.PORT, fallback: DEFAULT_PORTS.gateway.listen },
  ...Object.fromEntries(Object.entries(ADDR_VARS).map(([name, v]) => [name, { given: env[v] && port(env[v]), fallback: DEFAULT_PORTS[name].listen }])),
  ...Object.fromEntries(Object.entries(DEFAULT_PORTS).map(([name, d]) => [`${name} metrics`, { given: undefined, fallback: d.metrics }])),
});
PORT = String(ports.gateway.port);
for (const [name, v] of Object.entries(ADDR_VARS)) ADDR[name] = env[v] ?? `127.0.0.1:${ports[name].port}`;
for (const name of Object.keys(DEFAULT_PORTS)) METRICS[name] = String(ports[`${name} metrics`].port);

for (const service of SERVICES) {
  startChild(service.name, process.execPath, [join(root, 'services', service.name, 'dist/main.js')], service.env());
}
const base = `http://127.0.0.1:${PORT}`;
await waitFor('the gateway', async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.ok === true, 60_000);

console.log(`
✓ ready at ${base}   (API reference: ${base}/docs, OpenAPI: ${base}/openapi.json)
  ports: ${Object.keys(DEFAULT_PORTS)
    .map((name) => `${name} ${name === 'gateway' ? PORT : port(ADDR[name])} (metrics ${METRICS[name]})`)
    .join(', ')}${Object.values(ports).some((p) => p.how === 'picked') ? '\n         (ports not set and taken at their defaults were picked free)' : ''}
  logs: ${join(dataDir(), 'logs')}
  get a token:  ${tokenCommand()}
  try it:       curl -H "Authorization: Bearer $TOKEN" ${base}/v1/agent/projects
  stop:         Ctrl-C`);

/**
 * The banner's token line, a command that works as printed in another shell: it carries DATA_DIR
 * when that is not the default (the dev secret lives there); with AUTH_JWT_SECRET set, the shell
 * needs it too (never printed); with a JWKS URL or a public key, tokens come from that issuer.
 */
function tokenCommand() {
  if (env.AUTH_JWKS_URL || env.AUTH_PUBLIC_KEY) return '(tokens come from your issuer: AUTH_JWKS_URL / AUTH_PUBLIC_KEY is set)';
  const dir = env.DATA_DIR === undefined ? '' : `DATA_DIR=${shellQuote(dataDir())} `;
  const secret = env.AUTH_JWT_SECRET ? '   (with AUTH_JWT_SECRET set as here)' : '';
  return `TOKEN=$(${dir}npm run -s token -- alice)${secret}`;
}

/** `text` as one word for sh. */
function shellQuote(text) {
  return /^[\w./:-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

function mkdir(name) {
  const dir = join(dataDir(), name);
  mkdirSync(dir, { recursive: true });
  return dir;
}
