import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openApiDocument } from './document.js';

const require = createRequire(import.meta.url);
const cli = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin/cli.js');
const config = fileURLToPath(new URL('../../../../../redocly.yaml', import.meta.url));

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
}

/** `redocly lint --format=json` of one file; it exits 1 when it finds errors, so any exit is read. */
function lint(file: string): Promise<LintReport> {
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [cli, 'lint', '--config', config, '--format=json', file], { env, cwd: dirname(file), maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      try {
        resolve(JSON.parse(stdout) as LintReport);
      } catch {
        reject(new Error(`redocly lint gave no report (${err?.message ?? 'exit 0'}): ${stderr.slice(-2_000)}`));
      }
    });
  });
}

const dir = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('openapi — redocly lint', () => {
  it('openapi — the generated document passes redocly lint (recommended ruleset, redocly.yaml) with no error and no warning', async () => {
    const file = join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(openApiDocument()));
    const report = await lint(file);
    expect(report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 120_000);

  it('openapi — the lint is not blind: an example that breaks its schema is reported', async () => {
    const doc = openApiDocument() as { paths: Record<string, Record<string, { parameters?: { name: string; example?: unknown }[] }>> };
    const page = doc.paths['/v1/agents']!.get!.parameters!.find((p) => p.name === 'page')!;
    page.example = 'one';
    const file = join(dir, 'broken.json');
    await writeFile(file, JSON.stringify(doc));
    const report = await lint(file);
    expect(report.problems.map((p) => p.ruleId)).toEqual(['no-invalid-parameter-examples']);
  }, 120_000);
});
