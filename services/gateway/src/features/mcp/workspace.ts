import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { errors, isAppError } from '@workspace/platform';
import type { FileEntry, UploadFileResponse } from '@workspace/proto/workspace/files/v1/files';
import { UploadSession } from '../../transfer/upload-session.js';
import type { ToolContext } from './tools/tool.js';

export const sha256Of = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/**
 * A file's bytes as read, with what the answer reports about them: the revision and media type
 * come with the bytes from the files service, so they are those of exactly these bytes.
 */
export interface ReadBytes {
  path: string;
  bytes: Buffer;
  sha256: string;
  revision: string | null;
  mimeType: string;
}

/** What a read of `path` (normalized) reports of the bytes read and their `entry`, when the service sent one. */
function readBytes(path: string, bytes: Buffer, entry: FileEntry | undefined, fallbackType: string): ReadBytes {
  return { path, bytes, sha256: sha256Of(bytes), revision: entry?.revision || null, mimeType: entry?.mimeType || fallbackType };
}

/**
 * A text file's bytes (the files service enforces the read limit and UTF-8: FILE_TOO_LARGE,
 * FILE_NOT_TEXT, IS_A_DIRECTORY), of the current file or of one revision.
 */
export async function readText(ctx: ToolContext, path: string, revision = ''): Promise<ReadBytes> {
  let at = '';
  let entry: FileEntry | undefined;
  const parts: Buffer[] = [];
  for await (const chunk of ctx.files.readFile({ path, revision }, ctx.call)) {
    at ||= chunk.path;
    entry ??= chunk.entry;
    parts.push(chunk.data);
  }
  return readBytes(at || path, Buffer.concat(parts), entry, 'text/plain');
}

/**
 * Any file's bytes up to the read limit: a text read first (which applies the limit); bytes
 * that are not text come from the store by the presigned URL the files service hands out.
 */
export async function readAny(ctx: ToolContext, path: string): Promise<ReadBytes> {
  try {
    return await readText(ctx, path);
  } catch (err) {
    if (!isAppError(err) || err.code !== 'FILE_NOT_TEXT') throw err;
  }
  const opened = await ctx.files.openDownload({ path, revision: '' }, ctx.call);
  const res = await ctx.store.get(opened.url, undefined, ctx.call.signal);
  const parts: Buffer[] = [];
  for await (const chunk of res) parts.push(chunk as Buffer);
  return readBytes(opened.entry?.path ?? path, Buffer.concat(parts), opened.entry, 'application/octet-stream');
}

/**
 * An upload onto a directory stores the file part in it under the part's filename; a write has
 * no file part (its filename is ''), so the files service's refusal names one the tool does not
 * have. Said as what it is: a file cannot replace a directory (PATH_CONFLICT, as the path rules say).
 */
function ontoDirectory(err: unknown, path: string): unknown {
  if (!isAppError(err) || err.code !== 'INVALID_ARGUMENT' || err.details?.field !== 'file') return err;
  return errors.pathConflict(path, 'a directory exists at this path, and a file cannot replace it');
}

export interface WriteOptions {
  /** Commit only onto a file with exactly these bytes. */
  ifMatch?: string | undefined;
}

/**
 * Stores `bytes` as the file at `path` through the one upload session every upload takes
 * (names, MAX_UPLOAD_BYTES, the quota reserved before bytes are sent, abort on any failure),
 * holding one of the user's concurrent upload slots meanwhile.
 */
export async function writeFile(ctx: ToolContext, path: string, bytes: Buffer, options: WriteOptions = {}): Promise<Omit<UploadFileResponse, 'revision'> & { revision: string | null }> {
  if (path.endsWith('/')) throw errors.invalidPath('a file path cannot end with "/"', path);
  const release = ctx.uploads ? await ctx.uploads.acquire(ctx.call.userId) : () => undefined;
  try {
    const deps = { files: ctx.files, store: ctx.store, logger: ctx.logger };
    const session = await UploadSession.begin(deps, ctx.call, { path, filename: '', onConflict: 'overwrite', ifMatch: options.ifMatch }, { declaredSize: bytes.length }).catch((err: unknown) => {
      throw ontoDirectory(err, path);
    });
    let stored: UploadFileResponse;
    try {
      const sent = await session.send(Readable.from([bytes]), bytes.length);
      stored = await session.commit(sent);
    } catch (err) {
      await session.abortNow();
      throw err;
    }
    return { ...stored, revision: stored.revision || null };
  } finally {
    release();
  }
}
