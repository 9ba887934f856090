import { createTwoFilesPatch } from 'diff';
import { z } from 'zod';
import { AppError, errors, isAppError } from '@workspace/platform';
import { readText, writeFile } from '../workspace.js';
import { defineTool, FileFacts, PathArg, Sha256 } from './tool.js';

const Written = z.object({ ...FileFacts });

export const writeFileTool = defineTool({
  name: 'write_file',
  title: 'Write a file',
  description: 'Creates or replaces a file, and missing folders. With `expectedSha256`, only onto those bytes (else PRECONDITION_FAILED).',
  input: z.strictObject({
    path: PathArg,
    content: z.string(),
    expectedSha256: Sha256.optional(),
  }),
  output: Written,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  run: async ({ path, content, expectedSha256 }, ctx) => {
    const stored = await writeFile(ctx, path, Buffer.from(content, 'utf8'), { ifMatch: expectedSha256 });
    return {
      text: `Successfully wrote to ${stored.path}`,
      structured: { path: stored.path, size: Number(stored.size), mimeType: stored.mimeType, sha256: stored.sha256, revision: stored.revision },
    };
  },
});

/**
 * Applies the edits in order to `text`; each `oldText` must occur exactly once in the text as
 * the edits before it left it (EDIT_NOT_APPLICABLE with the edit's index otherwise).
 */
export function applyEdits(text: string, edits: readonly { oldText: string; newText: string }[]): string {
  let out = text;
  edits.forEach(({ oldText, newText }, edit) => {
    const at = oldText === '' ? -1 : out.indexOf(oldText);
    const again = at === -1 ? -1 : out.indexOf(oldText, at + 1);
    if (at === -1 || again !== -1) {
      const why = at === -1 ? 'is not in the file' : 'occurs more than once';
      throw new AppError('EDIT_NOT_APPLICABLE', `edits[${edit}].oldText ${why}; it must occur exactly once`, { details: { edit: String(edit) } });
    }
    out = out.slice(0, at) + newText + out.slice(at + oldText.length);
  });
  return out;
}

/**
 * What a diff may cost. Myers' algorithm takes time with the texts' length times the number of
 * lines that differ, on the gateway's one thread: 10,000 lines all changed took over a minute,
 * with every other request waiting. A diff beyond this many changed lines, or this long to
 * compute, is given as the whole text replaced, which costs nothing to compute.
 */
const DIFF_MAX_CHANGED_LINES = 1_000;
const DIFF_TIMEOUT_MS = 200;

/** A git-style unified diff of `before` → `after`, with 3 lines of context; within DIFF_MAX_CHANGED_LINES and DIFF_TIMEOUT_MS. */
export function unifiedDiff(path: string, before: string, after: string): string {
  const diff = createTwoFilesPatch(path, path, before, after, undefined, undefined, { context: 3, maxEditLength: DIFF_MAX_CHANGED_LINES, timeout: DIFF_TIMEOUT_MS });
  return diff ?? wholeReplacement(path, before, after);
}

/** One hunk that removes every line of `before` and adds every line of `after`, as createTwoFilesPatch formats it. */
function wholeReplacement(path: string, before: string, after: string): string {
  const side = (text: string, sign: '-' | '+'): string[] => {
    if (text === '') return [];
    const lines = text.split('\n');
    // '' when the text ends with a newline; else its last line, which has none.
    const last = lines.pop()!;
    const out = lines.map((line) => sign + line);
    if (last !== '') out.push(sign + last, '\\ No newline at end of file');
    return out;
  };
  const removed = side(before, '-');
  const added = side(after, '+');
  const count = (lines: string[]) => lines.filter((l) => !l.startsWith('\\')).length;
  const range = (n: number) => `${n === 0 ? 0 : 1},${n}`;
  const header = [`Index: ${path}`, '='.repeat(67), `--- ${path}`, `+++ ${path}`];
  const hunk = removed.length + added.length === 0 ? [] : [`@@ -${range(count(removed))} +${range(count(added))} @@`, ...removed, ...added];
  return `${[...header, ...hunk].join('\n')}\n`;
}

/** Edits times the text's length that one edit_file may search through (12 edits of a 10 MiB file, 1,300 of 100 KiB). */
const EDIT_MAX_WORK = 128 * 1024 * 1024;

/** How often edit_file reads again after another writer changed the file between its read and its commit. */
const EDIT_ATTEMPTS = 5;

export const editFileTool = defineTool({
  name: 'edit_file',
  title: 'Edit a text file',
  description:
    'Replaces each `oldText` by its `newText`, in order; answers a git-style diff. Each `oldText` must occur exactly once, else EDIT_NOT_APPLICABLE ' +
    'and nothing changes. A concurrent change is kept. `expectedSha256` as write_file.',
  input: z.strictObject({
    path: PathArg,
    edits: z.array(z.strictObject({ oldText: z.string(), newText: z.string() })).min(1),
    dryRun: z.boolean().default(false).describe('Show the diff, change nothing'),
    expectedSha256: Sha256.optional(),
  }),
  output: z.object({ ...FileFacts, diff: z.string(), dryRun: z.boolean() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  run: async ({ path, edits, dryRun, expectedSha256 }, ctx) => {
    // Without expectedSha256 a commit refused because the file changed since it was read is tried
    // again on what is there now: the edits still apply to it (else EDIT_NOT_APPLICABLE) and the
    // change it did not see is kept. With expectedSha256 the caller decides, so it fails at once.
    for (let attempt = 1; ; attempt++) {
      const read = await readText(ctx, path);
      if (expectedSha256 !== undefined && expectedSha256 !== read.sha256) {
        throw new AppError('PRECONDITION_FAILED', `${read.path} does not have the expected bytes`, { details: { currentSha256: read.sha256 } });
      }
      const before = read.bytes.toString('utf8');
      // Each edit searches the whole text twice (it must occur exactly once), on the gateway's
      // one thread: 10,000 edits of a 1 MB file took a minute, with every other request waiting.
      if (edits.length * before.length > EDIT_MAX_WORK) {
        throw errors.invalidArgument(`edits: ${edits.length} edits of a file of ${before.length} characters are more than one edit_file takes; send fewer at a time`, 'edits');
      }
      const after = applyEdits(before, edits);
      const diff = unifiedDiff(read.path, before, after);
      const text = `\`\`\`diff\n${diff}\`\`\`\n`;
      if (dryRun) {
        return { text, structured: { path: read.path, size: read.bytes.length, mimeType: read.mimeType, sha256: read.sha256, revision: read.revision, diff, dryRun } };
      }
      try {
        const stored = await writeFile(ctx, read.path, Buffer.from(after, 'utf8'), { ifMatch: expectedSha256 ?? read.sha256 });
        return { text, structured: { path: stored.path, size: Number(stored.size), mimeType: stored.mimeType, sha256: stored.sha256, revision: stored.revision, diff, dryRun } };
      } catch (err) {
        const raced = isAppError(err) && err.code === 'PRECONDITION_FAILED' && expectedSha256 === undefined;
        if (!raced || attempt >= EDIT_ATTEMPTS) throw err;
      }
    }
  },
});
