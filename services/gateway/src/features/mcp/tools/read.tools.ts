import { z } from 'zod';
import { errors, isAppError } from '@workspace/platform';
import { readAny, readText } from '../workspace.js';
import { toolError } from '../tool-result.js';
import { fileUri } from '../uri.js';
import { defineTool, FileFacts, PathArg, READ_ONLY, type ToolContext } from './tool.js';

const RevisionId = z.string().regex(/^rev_[0-9a-f]{32}$/, 'must be a revision id (rev_ + 32 lowercase hex)');

/** A text file read whole, with the revision and media type of exactly the bytes read. */
async function textFile(ctx: ToolContext, path: string, revision?: string) {
  const read = await readText(ctx, path, revision ?? '');
  const content = read.bytes.toString('utf8');
  return { path: read.path, content, size: read.bytes.length, mimeType: read.mimeType, sha256: read.sha256, revision: read.revision };
}

/** The first `head` or last `tail` lines, joined by newlines (as the reference server answers them). */
function lines(content: string, head?: number, tail?: number): string {
  if (head === undefined && tail === undefined) return content;
  const all = content.split('\n');
  // A final newline ends the last line; it does not start another.
  if (all.length > 1 && all.at(-1) === '') all.pop();
  return (head !== undefined ? all.slice(0, head) : all.slice(Math.max(0, all.length - tail!))).join('\n');
}

const ReadTextArgs = z.strictObject({
  path: PathArg,
  head: z.number().int().min(1).optional().describe('Only the first N lines'),
  tail: z.number().int().min(1).optional().describe('Only the last N lines'),
  revision: RevisionId.optional(),
});

/** read_text_file and its deprecated alias read_file: one behaviour under two names. */
function readTextTool(name: string, title: string, description: string) {
  return defineTool({
    name,
    title,
    description,
    input: ReadTextArgs,
    output: z.object({ ...FileFacts, content: z.string() }),
    annotations: READ_ONLY,
    run: async ({ path, head, tail, revision }, ctx) => {
      if (head !== undefined && tail !== undefined) throw errors.invalidArgument('give head or tail, not both', 'tail');
      const file = await textFile(ctx, path, revision);
      const content = lines(file.content, head, tail);
      return { text: content, structured: { ...file, content } };
    },
  });
}

export const readTextFile = readTextTool(
  'read_text_file',
  'Read a text file',
  'A UTF-8 file, whole or its first `head` or last `tail` lines; of a past `revision` (list_revisions). Its sha256 is for `expectedSha256`.',
);

/** The reference filesystem server's old name of read_text_file, which prompts made for it still use. */
export const readFile = readTextTool('read_file', 'Read a text file (deprecated)', 'Deprecated alias of read_text_file.');

/** How a media file is shown: as an image, as audio, or as an embedded resource. */
function mediaKind(mimeType: string): 'image' | 'audio' | 'resource' {
  if (mimeType.startsWith('image/')) return 'image';
  if (mimeType.startsWith('audio/')) return 'audio';
  return 'resource';
}

export const readMediaFile = defineTool({
  name: 'read_media_file',
  title: 'Read a media file',
  description: 'A file as base64: image or audio content, else an embedded resource.',
  input: z.strictObject({ path: PathArg }),
  output: z.object({ ...FileFacts, kind: z.enum(['image', 'audio', 'resource']) }),
  annotations: READ_ONLY,
  run: async ({ path }, ctx) => {
    const read = await readAny(ctx, path);
    const mimeType = read.mimeType;
    const kind = mediaKind(mimeType);
    const data = read.bytes.toString('base64');
    const facts = { path: read.path, size: read.bytes.length, mimeType, sha256: read.sha256, revision: read.revision, kind };
    return {
      text: `${read.path} (${mimeType}, ${read.bytes.length} bytes)`,
      structured: facts,
      content: [kind === 'resource' ? { type: 'resource', resource: { uri: fileUri(read.path), mimeType, blob: data } } : { type: kind, data, mimeType }],
    };
  },
});

export const readMultipleFiles = defineTool({
  name: 'read_multiple_files',
  title: 'Read several text files',
  description: 'Up to 100 text files; one that fails carries `error` and fails no other.',
  input: z.strictObject({ paths: z.array(PathArg).min(1).max(100) }),
  output: z.object({
    files: z.array(
      z.object({
        path: z.string(),
        content: z.string().optional(),
        size: z.number().int().optional(),
        mimeType: z.string().optional(),
        sha256: z.string().optional(),
        revision: z.string().nullable().optional(),
        error: z.object({ code: z.string(), message: z.string() }).optional(),
      }),
    ),
  }),
  annotations: READ_ONLY,
  run: async ({ paths }, ctx) => {
    const files = await Promise.all(
      paths.map(async (path) => {
        try {
          return await textFile(ctx, path);
        } catch (err) {
          if (!isAppError(err) || err.code === 'INTERNAL') throw err;
          return { path, error: toolError(err) };
        }
      }),
    );
    const text = files.map((f) => ('error' in f ? `${f.path}: Error - ${f.error.message}` : `${f.path}:\n${f.content}\n`)).join('\n---\n');
    return { text, structured: { files } };
  },
});
