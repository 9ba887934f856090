import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { errors, isAppError } from '@workspace/platform';
import type { Revision, UploadFileResponse } from '@workspace/proto/workspace/files/v1/files';
import { UploadSession } from '../../transfer/upload-session.js';
import type { ToolContext } from './tools/tool.js';

export const sha256Of = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** A file's bytes as read, with what the answer reports about them. */
export interface ReadBytes {
  path: string;
  bytes: Buffer;
  sha256: string;
}

/**
 * A text file's bytes (the files service enforces the read limit and UTF-8: FILE_TOO_LARGE,
 * FILE_NOT_TEXT, IS_A_DIRECTORY), of the current file or of one revision.
 */
export async function readText(ctx: ToolContext, path: string, revision = ''): Promise<ReadBytes> {
  let at = '';
  const parts: Buffer[] = [];
  for await (const chunk of ctx.files.readFile({ path, revision }, ctx.call)) {
    at ||= chunk.path;
    parts.push(chunk.data);
  }
  const bytes = Buffer.concat(parts);
  return { path: at || path, bytes, sha256: sha256Of(bytes) };
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
  const bytes = Buffer.concat(parts);
  return { path: opened.entry?.path ?? path, bytes, sha256: sha256Of(bytes) };
}

/**
 * The revisions of `path`, newest first (none when nothing was ever there), asked for now: a read
 * can start it beside its own call and await it after, so the two round trips overlap.
 */
export function revisionsOf(ctx: ToolContext, path: string): Promise<Revision[]> {
  const listing = ctx.files.listRevisions({ path, revision: '' }, ctx.call).then(
    (found) => found.revisions,
    (err: unknown) => {
      if (isAppError(err) && err.code === 'FILE_NOT_FOUND') return [];
      throw err;
    },
  );
  // Awaited only after the call it runs beside; a failure meanwhile is not an unhandled rejection.
  listing.catch(() => undefined);
  return listing;
}

/** The revision holding `sha256` among `revisions` (the newest, when it has those bytes), or null. */
export function newestWith(revisions: readonly Revision[], sha256: string): Revision | null {
  const newest = revisions[0];
  return newest && !newest.deleted && newest.sha256 === sha256 ? newest : null;
}

/** The revision holding `sha256` at `path` now (the newest, when it has those bytes), or null. */
export async function revisionOf(ctx: ToolContext, path: string, sha256: string): Promise<Revision | null> {
  return newestWith(await revisionsOf(ctx, path), sha256);
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
export async function writeFile(ctx: ToolContext, path: string, bytes: Buffer, options: WriteOptions = {}): Promise<UploadFileResponse & { revision: string | null }> {
  if (path.endsWith('/')) throw errors.invalidPath('a file path cannot end with "/"', path);
  const release = ctx.uploads ? await ctx.uploads.acquire(ctx.call.userId) : () => undefined;
  try {
    const deps = { files: ctx.files, store: ctx.store, logger: ctx.logger };
    const session = await UploadSession.begin(deps, ctx.call, { path, filename: '', onConflict: 'overwrite', ifMatch: options.ifMatch }, { declaredSize: bytes.length });
    let stored: UploadFileResponse;
    try {
      const sent = await session.send(Readable.from([bytes]), bytes.length);
      stored = await session.commit(sent);
    } catch (err) {
      await session.abortNow();
      throw err;
    }
    const revision = await revisionOf(ctx, stored.path, stored.sha256);
    return { ...stored, revision: revision?.revision ?? null };
  } finally {
    release();
  }
}
