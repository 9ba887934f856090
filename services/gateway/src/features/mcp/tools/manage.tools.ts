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
    throw inToolTerms(err, to);
  }
}

/** The files service's refusal in the words of the tool's own arguments. */
function inToolTerms(err: unknown, to: string): unknown {
  if (!isAppError(err)) return err;
  // A tree past MAX_TREE_ENTRIES names the route's `from`: here the argument is `source`.
  if (err.code === 'INVALID_ARGUMENT' && err.details?.field === 'from') return new AppError(err.code, err.message, { details: { ...err.details, field: 'source' } });
  // The route's advice (onConflict=overwrite or uuid) names an argument these tools do not take:
  // an agent that followed it was refused again, and looped.
  if (err.code === 'FILE_EXISTS') {
    const at = err.details?.path ?? to;
    return new AppError('FILE_EXISTS', `a file already exists at ${at}; delete or move it first, or choose another destination`, { details: { path: at } });
  }
  return err;
}

export const moveFileTool = defineTool({
  name: 'move_file',
  title: 'Move or rename',
  description: 'Moves or renames a file or directory; fails if `destination` exists.',
  input: z.strictObject({ source: PathArg, destination: PathArg }),
  output: Moved,
  // Destructive as the reference has it: nothing is left at `source`.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  run: async ({ source, destination }, ctx) => {
    const out = await moveOrCopy(ctx, 'moveFile', source, destination);
    return { text: `Successfully moved ${out.from} to ${out.path}`, structured: out };
  },
});

export const copyFileTool = defineTool({
  name: 'copy_file',
  title: 'Copy',
  description: 'Copies a file or directory (no bytes are copied); fails if `destination` exists.',
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
  description: 'Moves a file, or a directory with `recursive`, to the trash (restore_file undoes it).',
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
  description: 'Type; for a file also size, modification time, media type, sha256, revision.',
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
  description: 'Creates a directory and missing parents; `created: false` if it was there.',
  input: z.strictObject({ path: PathArg }),
  output: z.object({ path: z.string(), created: z.boolean() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: async ({ path }, ctx) => {
    const out = await ctx.files.createDirectory({ path }, ctx.call);
    return { text: out.created ? `Successfully created directory ${out.path}` : `Directory ${out.path} already exists`, structured: { path: out.path, created: out.created } };
  },
});
