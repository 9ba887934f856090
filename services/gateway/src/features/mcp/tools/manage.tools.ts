import { z } from 'zod';
import { AppError, isAppError } from '@workspace/platform';
import { EntryType } from '@workspace/proto/workspace/files/v1/files';
import { CONFLICT_MODES } from '../../../clients.js';
import { defineTool, PathArg, READ_ONLY, type ToolContext } from './tool.js';

/** Move and copy change the index only, but a directory of many files takes longer than the default deadline. */
const MOVE_DEADLINE_MS = 60_000;

const Moved = z.object({ success: z.literal(true), from: z.string(), path: z.string() });

async function moveOrCopy(ctx: ToolContext, verb: 'moveFile' | 'copyFile', from: string, to: string) {
  try {
    const out = await ctx.files[verb]({ from, to, onConflict: CONFLICT_MODES.error }, { ...ctx.call, deadlineMs: MOVE_DEADLINE_MS });
    return { success: true as const, from: out.from, path: out.path };
  } catch (err) {
    // A tree past MAX_TREE_ENTRIES names the route's `from`: here the argument is `source`.
    if (isAppError(err) && err.code === 'INVALID_ARGUMENT' && err.details?.field === 'from') throw new AppError(err.code, err.message, { details: { ...err.details, field: 'source' } });
    throw err;
  }
}

export const moveFileTool = defineTool({
  name: 'move_file',
  title: 'Move or rename',
  description:
    'Moves (renames) a file or a directory to `destination`, a full path; fails if anything is there (FILE_EXISTS, PATH_CONFLICT). Atomic; no bytes are ' +
    'copied. A directory of more than MAX_TREE_ENTRIES (default 10,000) entries → INVALID_ARGUMENT (`details.field` `source`): move the folders below it.',
  input: z.strictObject({ source: PathArg, destination: PathArg }),
  output: Moved,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  run: async ({ source, destination }, ctx) => {
    const out = await moveOrCopy(ctx, 'moveFile', source, destination);
    return { text: `Successfully moved ${out.from} to ${out.path}`, structured: out };
  },
});

export const copyFileTool = defineTool({
  name: 'copy_file',
  title: 'Copy',
  description:
    'Copies a file or a directory to `destination`, a full path; fails if anything is there (FILE_EXISTS, PATH_CONFLICT). No bytes are copied; the copy ' +
    'is independent from then on. A directory of more than MAX_TREE_ENTRIES (default 10,000) entries → INVALID_ARGUMENT (`details.field` `source`); ' +
    'what the copy creates counts toward MAX_FILES (QUOTA_EXCEEDED).',
  input: z.strictObject({ source: PathArg, destination: PathArg }),
  output: Moved,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: async ({ source, destination }, ctx) => {
    const out = await moveOrCopy(ctx, 'copyFile', source, destination);
    return { text: `Successfully copied ${out.from} to ${out.path}`, structured: out };
  },
});

export const deleteFileTool = defineTool({
  name: 'delete_file',
  title: 'Delete (into the trash)',
  description: 'Deletes a file, or a directory with `recursive: true` (else DIRECTORY_NOT_EMPTY), into the trash: restore_file brings it back.',
  input: z.strictObject({ path: PathArg, recursive: z.boolean().default(false) }),
  output: z.object({ success: z.literal(true), path: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  run: async ({ path, recursive }, ctx) => {
    const out = await ctx.files.deleteFile({ path, recursive, permanent: false }, ctx.call);
    return { text: `Successfully deleted ${out.path} (restore_file brings it back)`, structured: { success: true, path: out.path } };
  },
});

/** A file's entry; a directory (which StatFile refuses as IS_A_DIRECTORY) as one with its path and name. */
async function statOrDirectory(ctx: ToolContext, path: string) {
  try {
    return await ctx.files.statFile({ path, revision: '' }, ctx.call);
  } catch (err) {
    if (!isAppError(err) || err.code !== 'IS_A_DIRECTORY') throw err;
    const at = err.details?.path ?? path.replace(/\/+$/, '');
    return { path: at, name: at.slice(at.lastIndexOf('/') + 1), type: EntryType.ENTRY_TYPE_DIRECTORY, size: 0, modifiedAt: '', mimeType: '', sha256: '', revision: '' };
  }
}

export const getFileInfo = defineTool({
  name: 'get_file_info',
  title: 'File information',
  description: 'What is known of a file or directory: type, and for a file its size, modification time, media type, sha256 and revision.',
  input: z.strictObject({ path: PathArg }),
  output: z.object({
    path: z.string(),
    name: z.string(),
    type: z.enum(['file', 'directory']),
    isFile: z.boolean(),
    isDirectory: z.boolean(),
    size: z.number().int().optional(),
    modifiedAt: z.string().optional(),
    mimeType: z.string().optional(),
    sha256: z.string().optional(),
    revision: z.string().nullable().optional(),
  }),
  annotations: READ_ONLY,
  run: async ({ path }, ctx) => {
    const e = await statOrDirectory(ctx, path);
    const isDirectory = e.type === EntryType.ENTRY_TYPE_DIRECTORY;
    const base = { path: e.path, name: e.name, type: isDirectory ? ('directory' as const) : ('file' as const), isFile: !isDirectory, isDirectory };
    const info = isDirectory
      ? base
      : { ...base, size: Number(e.size), modifiedAt: e.modifiedAt, mimeType: e.mimeType, sha256: e.sha256, revision: e.revision || null };
    return { text: Object.entries(info).map(([k, v]) => `${k}: ${String(v)}`).join('\n'), structured: info };
  },
});

export const createDirectoryTool = defineTool({
  name: 'create_directory',
  title: 'Create a directory',
  description:
    'Creates a directory, and any missing parents; succeeds when it is already there (`created: false`). An empty directory made this way stays until it ' +
    'is deleted. A file at the path or above it → PATH_CONFLICT.',
  input: z.strictObject({ path: PathArg }),
  output: z.object({ path: z.string(), created: z.boolean() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: async ({ path }, ctx) => {
    const out = await ctx.files.createDirectory({ path }, ctx.call);
    return { text: out.created ? `Successfully created directory ${out.path}` : `Directory ${out.path} already exists`, structured: { path: out.path, created: out.created } };
  },
});
