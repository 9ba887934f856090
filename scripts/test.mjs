// npm test: install what is missing, build, then typecheck, lint, and every vitest project
// (unit, integration, end-to-end) against real Redis, NATS and S3. Extra args go to vitest.
import { build, ensureInstalled, root, run } from './lib.mjs';
import { join } from 'node:path';

ensureInstalled();
build();
const bin = (name) => join(root, 'node_modules/.bin', name);
const steps = [
  ['typecheck', bin('turbo'), ['run', 'typecheck', '--output-logs=errors-only']],
  ['lint', bin('eslint'), ['--max-warnings=0', '.']],
  ['tests', bin('vitest'), ['run', ...process.argv.slice(2)]],
];
for (const [name, cmd, args] of steps) {
  console.log(`\n› ${name}`);
  const status = run(cmd, args);
  if (status !== 0) {
    console.error(`\n✗ ${name} failed`);
    process.exit(status);
  }
}
console.log('\n✓ all checks passed');
