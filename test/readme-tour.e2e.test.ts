import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedStack, type SharedStack } from './support/stack.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * The README's tour, run as printed (its bash blocks, in order, with bash) against a stack, then
 * the SDK's quickstart twice: what a newcomer does first must work, and the quickstart must not
 * trip over what the tour made (it created "Research" again: 409 PROJECT_EXISTS).
 */
let stack: SharedStack;
const dirs: string[] = [];
beforeAll(() => {
  stack = sharedStack();
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The bash blocks of the README's "A five-minute tour", in order. */
function tourBlocks(): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const tour = readme.slice(readme.indexOf('## A five-minute tour'), readme.indexOf('\n## ', readme.indexOf('## A five-minute tour') + 1));
  return [...tour.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

describe('the README tour', () => {
  it('readme — the tour runs as printed: every curl answers what its comment says (2xx, the one 412 it shows), then the SDK quickstart runs twice', async () => {
    const blocks = tourBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    const script = blocks.join('\n');
    // The token line signs with the dev secret of `npm start`'s DATA_DIR; this stack has its own.
    expect(script).toContain('TOKEN=$(npm run -s token -- alice)');
    expect(script).toContain('API=http://127.0.0.1:8080');
    const token = await stack.token();
    const dir = mkdtempSync(join(tmpdir(), 'readme-tour-'));
    dirs.push(dir);
    copyFileSync(join(root, 'README.md'), join(dir, 'README.md'));
    const statusLog = join(dir, 'statuses');
    const prelude = [
      'set -euo pipefail',
      // Every answer's status, in order (curl writes it to stderr, after the body as printed).
      `curl() { command curl -w '%{stderr}%{http_code}\\n' "$@" 2>>${statusLog}; }`,
    ].join('\n');
    const body = script.replace('TOKEN=$(npm run -s token -- alice)', `TOKEN=${token}`).replace('API=http://127.0.0.1:8080', `API=${stack.url}`);
    await run('bash', ['-c', `${prelude}\n${body}`], { cwd: dir, env: { ...process.env, PATH: process.env.PATH! } });
    const statuses = readFileSync(statusLog, 'utf8').trim().split('\n').map(Number);
    const shown = [...script.matchAll(/#\s*(4\d\d)\b/g)].map((m) => Number(m[1]));
    expect(statuses.length).toBeGreaterThanOrEqual(15);
    expect(statuses.filter((s) => s < 200 || s >= 300), statuses.join(' ')).toEqual(shown);
    // The export wrote its ZIP where the tour ran.
    expect(readFileSync(join(dir, 'Research.zip')).subarray(0, 2).toString('latin1')).toBe('PK');

    for (let i = 0; i < 2; i++) {
      const out = await run('npm', ['run', '-s', 'quickstart', '-w', '@workspace/sdk'], { cwd: root, env: { ...process.env, API_URL: stack.url, TOKEN: token } });
      expect(out.stdout).toContain('206 he');
    }
  }, 120_000);
});
