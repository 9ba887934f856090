import { z } from 'zod';
import { defineTool, PathArg, READ_ONLY } from './tool.js';

/** A search reads candidate files whole; a checkpoint or rewind of a large tree is one O(N) step: both outlast the default deadline. */
const TREE_DEADLINE_MS = 60_000;

const Match = z.object({ path: z.string(), line: z.number().int(), column: z.number().int(), text: z.string(), sha256: z.string() });

/** docs/api/files.md#search over MCP: one page of the same search as `GET /v1/agent/files/search`. */
export const grepTool = defineTool({
  name: 'grep',
  title: 'Search file contents',
  description: 'Finds `pattern` (a literal, case-insensitive unless `caseSensitive`; RE2 if `regex`) in text files at or below `path` matching `glob`.',
  input: z.strictObject({
    path: PathArg.optional(),
    pattern: z.string().min(1).max(1000),
    regex: z.boolean().default(false),
    caseSensitive: z.boolean().default(false),
    glob: z.string().optional(),
    maxResults: z.number().int().min(1).max(1000).default(100),
  }),
  output: z.object({ path: z.string(), pattern: z.string(), matches: z.array(Match), hasMore: z.boolean(), filesSearched: z.number().int() }),
  annotations: READ_ONLY,
  run: async ({ path, pattern, regex, caseSensitive, glob, maxResults }, ctx) => {
    const release = ctx.searches ? await ctx.searches.acquire(ctx.call.userId) : () => undefined;
    let out;
    try {
      out = await ctx.files.searchFiles(
        { path: path ?? '/files', q: pattern, regex, caseSensitive, glob: glob ?? '', limit: maxResults, cursor: '' },
        { ...ctx.call, deadlineMs: TREE_DEADLINE_MS },
      );
    } finally {
      release();
    }
    const matches = out.matches.map((m) => ({ path: m.path, line: m.line, column: m.column, text: m.text, sha256: m.sha256 }));
    const lines = matches.map((m) => `${m.path}:${m.line}:${m.column}: ${m.text}`);
    const more = out.hasMore ? `\n(more matches: raise maxResults or narrow path/glob)` : '';
    const text = matches.length === 0 ? `No matches (${out.filesSearched} files searched)` : `${lines.join('\n')}${more}`;
    return { text, structured: { path: out.path, pattern, matches, hasMore: out.hasMore, filesSearched: out.filesSearched } };
  },
});

const Checkpoint = z.object({ checkpointId: z.string(), path: z.string(), label: z.string(), createdAt: z.string(), files: z.number().int(), bytes: z.number().int() });

/** docs/api/files.md#checkpoints over MCP. */
export const createCheckpointTool = defineTool({
  name: 'create_checkpoint',
  title: 'Take a checkpoint',
  description: 'Records the tree at `path` (default /files), copying nothing, for `rewind`.',
  input: z.strictObject({ path: PathArg.optional(), label: z.string().max(200).optional() }),
  output: Checkpoint,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  run: async ({ path, label }, ctx) => {
    const c = await ctx.files.createCheckpoint({ path: path ?? '/files', label: label ?? '' }, { ...ctx.call, deadlineMs: TREE_DEADLINE_MS });
    const structured = { checkpointId: c.checkpointId, path: c.path, label: c.label, createdAt: c.createdAt, files: Number(c.files), bytes: Number(c.bytes) };
    return { text: `Checkpoint ${c.checkpointId} of ${c.path}: ${structured.files} files, ${structured.bytes} bytes`, structured };
  },
});

/** docs/api/files.md#rewind over MCP. */
export const rewindTool = defineTool({
  name: 'rewind',
  title: 'Rewind a tree',
  description: 'Makes the tree at `path` what it was at `to` (a checkpoint id or an ISO 8601 time), files and explicit folders, atomically; answers the checkpoint that undoes it.',
  input: z.strictObject({ path: PathArg, to: z.string().min(1) }),
  output: z.object({
    success: z.literal(true),
    path: z.string(),
    to: z.string(),
    restored: z.number().int(),
    removed: z.number().int(),
    unchanged: z.number().int(),
    checkpointId: z.string(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  run: async ({ path, to }, ctx) => {
    const r = await ctx.files.rewind({ path, to }, { ...ctx.call, deadlineMs: TREE_DEADLINE_MS });
    const structured = { success: true as const, path: r.path, to: r.to, restored: Number(r.restored), removed: Number(r.removed), unchanged: Number(r.unchanged), checkpointId: r.checkpointId };
    return {
      text: `Rewound ${r.path} to ${r.to}: ${structured.restored} restored, ${structured.removed} to the trash, ${structured.unchanged} unchanged (undo: rewind to ${r.checkpointId})`,
      structured,
    };
  },
});
