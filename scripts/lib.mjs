// Helpers shared by the root scripts (start, test, token). Plain ESM so they run before any build.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Installs dependencies when node_modules is missing or older than the lockfile. */
export function ensureInstalled() {
  const marker = join(root, 'node_modules', '.package-lock.json');
  const lock = join(root, 'package-lock.json');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return;
  // `npm install` (not `npm ci`): it installs the locked versions too, and npm's lockfiles made on
  // one platform lack other platforms' optional packages, which `npm ci` rejects.
  console.log('› installing dependencies…');
  // Errors only: npm's warnings here (engines wanted by packages that run on Node 20 all the same,
  // install scripts it skips) are nothing a user of the stack can act on.
  const res = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: root, stdio: 'inherit' });
  if (res.status !== 0) process.exit(res.status ?? 1);
}

export function run(cmd, args, options = {}) {
  const res = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' }, ...options });
  return res.status ?? 1;
}

export function build() {
  const status = run(join(root, 'node_modules/.bin/turbo'), ['run', 'build', '--output-logs=errors-only']);
  if (status !== 0) process.exit(status);
}

export function dataDir() {
  const dir = resolve(root, process.env.DATA_DIR ?? '.data');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * The HS256 secret tokens are signed with: AUTH_JWT_SECRET when set, else a development secret
 * created once under DATA_DIR (never used when a JWKS URL or public key is configured).
 */
export function devSecret() {
  if (process.env.AUTH_JWT_SECRET) return process.env.AUTH_JWT_SECRET;
  const file = join(dataDir(), 'dev-jwt-secret');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

export function onPath(binary) {
  try {
    execFileSync('sh', ['-c', `command -v ${binary}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Whether nothing listens on `port` of `host` (we could bind it now). */
function bindable(port, host) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** Resolves with a port the system picked free on `host`, held until `release` is called. */
function holdFree(host) {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => resolve({ port: server.address().port, release: () => new Promise((r) => server.close(() => r())) }));
  });
}

/**
 * The ports of a stack, by name: a port given in the environment is kept as given; else the
 * default when nothing listens there; else one the system picks free (all picked ones held until
 * every one is known, so none repeats). So a second stack on one machine (another PORT) never
 * collides with the first. → {name: {port, how: 'set' | 'default' | 'picked'}}.
 */
export async function choosePorts(wanted, host = '127.0.0.1') {
  const chosen = {};
  const held = [];
  try {
    for (const [name, { given, fallback }] of Object.entries(wanted)) {
      if (given !== undefined && given !== '') chosen[name] = { port: Number(given), how: 'set' };
      else if (!Object.values(chosen).some((c) => c.port === fallback) && (await bindable(fallback, host))) chosen[name] = { port: fallback, how: 'default' };
      else {
        const free = await holdFree(host);
        held.push(free);
        chosen[name] = { port: free.port, how: 'picked' };
      }
    }
  } finally {
    await Promise.all(held.map((h) => h.release()));
  }
  return chosen;
}
