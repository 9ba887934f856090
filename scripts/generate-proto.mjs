// Regenerates packages/proto/src/gen from proto/ with buf + ts-proto. The output is never
// edited by hand; turbo runs this before every build when a .proto file changes.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
rmSync(new URL('../packages/proto/src/gen', import.meta.url), { recursive: true, force: true });
execFileSync(`${root}node_modules/.bin/buf`, ['generate'], { cwd: root, stdio: 'inherit' });
