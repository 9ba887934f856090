// Helpers shared by the root scripts (start, test, token). Plain ESM so they run before any build.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
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
  const res = spawnSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
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
