import { errors, requireUser, type AsyncService, type Logger } from '@workspace/platform';
import { EntryType, FilesServiceService, OnConflict, type FileEntry, type UploadFileRequest } from '@workspace/proto/workspace/files/v1/files';
import type { Entry } from '../domain/entries.js';
import { exportFolder } from '../domain/export.js';
import type { Knowledge } from '../domain/knowledge.js';
import type { ObjectStore } from '../domain/ports.js';
import type { ConflictMode, Uploads } from '../domain/uploads.js';
import type { Workspace } from '../domain/workspace.js';

/** Entries per ListFiles message, and bytes per ReadFile message: far below any message limit. */
const LIST_BATCH = 1_000;
const READ_CHUNK = 1024 * 1024;
/**
 * Streamed bytes (downloads, exports) go out in messages of at least this size: a message costs
 * the same whatever its size, and S3 and zlib hand over 16–64 KiB at a time.
 */
const STREAM_MESSAGE_BYTES = 256 * 1024;

/**
 * Joins small chunks into messages of at least `min` bytes (the last may be smaller). The first
 * chunk goes out alone at once: the time to the first byte does not wait for a batch.
 */
async function* batched(source: AsyncIterable<Uint8Array>, min: number): AsyncIterable<{ data: Buffer }> {
  let parts: Uint8Array[] = [];
  let size = 0;
  let first = true;
  for await (const chunk of source) {
    parts.push(chunk);
    size += chunk.byteLength;
    if (size >= min || first) {
      first = false;
      yield { data: parts.length === 1 ? asBuffer(parts[0]!) : Buffer.concat(parts, size) };
      parts = [];
      size = 0;
    }
  }
  if (size > 0) yield { data: parts.length === 1 ? asBuffer(parts[0]!) : Buffer.concat(parts, size) };
}

export interface FilesHandlerDeps {
  workspace: Workspace;
  uploads: Uploads;
  knowledge: Knowledge;
  store: ObjectStore;
  logger: Logger;
}

function toProto(e: Entry): FileEntry {
  if (e.type === 'directory') return { path: e.path, name: e.name, type: EntryType.ENTRY_TYPE_DIRECTORY, size: 0, modifiedAt: '', mimeType: '', etag: '' };
  return { path: e.path, name: e.name, type: EntryType.ENTRY_TYPE_FILE, size: e.size, modifiedAt: e.modifiedAt, mimeType: e.mimeType, etag: e.etag };
}

function conflictMode(value: OnConflict): ConflictMode {
  switch (value) {
    case OnConflict.ON_CONFLICT_UNSPECIFIED:
    case OnConflict.ON_CONFLICT_ERROR:
      return 'error';
    case OnConflict.ON_CONFLICT_OVERWRITE:
      return 'overwrite';
    case OnConflict.ON_CONFLICT_UUID:
      return 'uuid';
    default:
      throw errors.invalidArgument('onConflict must be error, overwrite or uuid', 'onConflict');
  }
}

function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/**
 * The file bytes that follow the header. A cancelled call (the client went away) must never
 * look like a finished upload, so cancellation is checked after every message: only a
 * half-close from a live caller ends the body and lets the file be committed.
 */
async function* uploadBody(iterator: AsyncIterator<UploadFileRequest>, signal: AbortSignal): AsyncIterable<Uint8Array> {
  for (;;) {
    const next = await iterator.next();
    if (signal.aborted) throw errors.unavailable('the upload (cancelled by the caller)');
    if (next.done) return;
    if (next.value.part?.$case !== 'data') throw errors.invalidArgument('only file data may follow the upload header');
    yield next.value.part.value;
  }
}

export function filesHandlers(deps: FilesHandlerDeps): AsyncService<typeof FilesServiceService> {
  const { workspace, uploads, knowledge } = deps;
  return {
    listFiles: async function* (req, ctx) {
      const { path, entries } = await workspace.list(requireUser(ctx), req.path, req.recursive);
      for (let i = 0; i === 0 || i < entries.length; i += LIST_BATCH) {
        yield { path, entries: entries.slice(i, i + LIST_BATCH).map(toProto) };
      }
    },
    statFile: async (req, ctx) => toProto(await workspace.stat(requireUser(ctx), req.path)),
    readFile: async function* (req, ctx) {
      const { path, content } = await workspace.read(requireUser(ctx), req.path);
      for (let i = 0; i === 0 || i < content.byteLength; i += READ_CHUNK) {
        yield { path: i === 0 ? path : '', data: content.subarray(i, i + READ_CHUNK) };
      }
    },
    downloadFile: async function* (req, ctx) {
      const range = req.offset > 0 || req.length > 0 ? { offset: req.offset, length: req.length > 0 ? req.length : undefined } : undefined;
      const body = await workspace.download(requireUser(ctx), req.path, { range, etag: req.etag || undefined, signal: ctx.signal });
      yield* batched(body, STREAM_MESSAGE_BYTES);
    },
    uploadFile: async (requests, ctx) => {
      const userId = requireUser(ctx);
      const iterator = requests[Symbol.asyncIterator]();
      const first = await iterator.next();
      const header = !first.done && first.value.part?.$case === 'header' ? first.value.part.value : undefined;
      if (!header) throw errors.invalidArgument('the first message of an upload must be its header');
      const input = { path: header.path, filename: header.filename, onConflict: conflictMode(header.onConflict) };
      const stored = await uploads.upload(userId, input, uploadBody(iterator, ctx.signal));
      ctx.logger.info({ size: stored.size }, 'file uploaded');
      return stored;
    },
    writeFile: async (req, ctx) => {
      const stored = await uploads.writeFile(requireUser(ctx), req.path, req.content, req.overwrite);
      return toProto(await workspace.stat(requireUser(ctx), stored.path));
    },
    deleteFile: async (req, ctx) => workspace.delete(requireUser(ctx), req.path, req.recursive),
    exportFolder: async function* (req, ctx) {
      const zip = exportFolder({ store: deps.store, userId: requireUser(ctx), folder: req.path, rootName: req.rootName, logger: ctx.logger, signal: ctx.signal });
      try {
        yield* batched(zip as AsyncIterable<Uint8Array>, STREAM_MESSAGE_BYTES);
      } finally {
        zip.destroy();
      }
    },
    pinKnowledge: async (req, ctx) => {
      const files = await knowledge.pin(requireUser(ctx), req.agentId, req.paths);
      ctx.logger.info({ agentId: req.agentId, files: files.length }, 'knowledge pinned');
      return { files };
    },
  };
}
