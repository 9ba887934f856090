import { errors, requireUser, type AsyncService } from '@workspace/platform';
import { EntryType, FilesServiceService, OnConflict, type FileEntry } from '@workspace/proto/workspace/files/v1/files';
import type { Changes } from '../domain/changes.js';
import type { CheckpointInfo, Checkpoints } from '../domain/checkpoints.js';
import { entryJson, type Entry } from '../domain/entries.js';
import type { Knowledge } from '../domain/knowledge.js';
import type { Revisions } from '../domain/revisions.js';
import type { Search } from '../domain/search.js';
import type { BlobStore, ConflictMode } from '../domain/ports.js';
import type { Uploads } from '../domain/uploads.js';
import { DEFAULT_PAGE, toEntry, type ListResult, type StatEntry, type Workspace } from '../domain/workspace.js';

/** Entries per ListFiles message, and bytes per ReadFile message: far below any message limit. */
const LIST_BATCH = 1_000;
/** Bytes of rendered entries per ListFiles message: far below the 8 MiB message limit. */
const JSON_BATCH_BYTES = 1024 * 1024;

/** A listing's entries as the API's JSON, in messages of about JSON_BATCH_BYTES; the cursor rides on the last. */
function* jsonBatches(found: ListResult, includeStats: boolean) {
  const message = (parts: string[], last: boolean) => ({
    path: found.path,
    entries: [],
    entriesJson: Buffer.from(parts.join(','), 'utf8'),
    nextCursor: last ? (found.next ?? '') : '',
    hasMore: last && found.next !== undefined,
  });
  let parts: string[] = [];
  let size = 0;
  for (const e of found.entries) {
    const json = entryJson(e.path, e.entry, includeStats);
    if (size + json.length > JSON_BATCH_BYTES && parts.length > 0) {
      yield message(parts, false);
      parts = [];
      size = 0;
    }
    parts.push(json);
    size += json.length + 1;
  }
  yield message(parts, true);
}
const READ_CHUNK = 1024 * 1024;
/** Export items per message. */
const EXPORT_BATCH = 500;
/** An export item's URL is used within moments of its message (the caller opens a few ahead). */
const EXPORT_URL_SECONDS = 3600;

export interface FilesHandlerDeps {
  workspace: Workspace;
  uploads: Uploads;
  knowledge: Knowledge;
  changes: Changes;
  blobs: BlobStore;
  revisions: Revisions;
  search: Search;
  checkpoints: Checkpoints;
}

function checkpointProto(c: CheckpointInfo) {
  return { checkpointId: c.checkpointId, path: c.path, label: c.label, createdAt: c.createdAt, files: c.files, bytes: c.bytes };
}

/** An entry as the proto's: `revision` only for one file stated or read, never in listings. */
function toProto(e: Entry | StatEntry): FileEntry {
  if (e.type === 'directory') return { path: e.path, name: e.name, type: EntryType.ENTRY_TYPE_DIRECTORY, size: 0, modifiedAt: '', mimeType: '', sha256: '', revision: '' };
  const revision = 'revision' in e ? e.revision : '';
  return { path: e.path, name: e.name, type: EntryType.ENTRY_TYPE_FILE, size: e.size, modifiedAt: e.modifiedAt, mimeType: e.mimeType, sha256: e.sha256, revision };
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

export function filesHandlers(deps: FilesHandlerDeps): Omit<AsyncService<typeof FilesServiceService>, 'openKnowledge' | 'stageKnowledge' | 'pinStagedKnowledge'> {
  const { workspace, uploads, knowledge, changes, revisions, search, checkpoints } = deps;
  return {
    listFiles: async function* (req, ctx) {
      const userId = requireUser(ctx);
      const found = req.paged
        ? await workspace.listPage(userId, req.path, req.recursive, req.limit || DEFAULT_PAGE, req.cursor)
        : await workspace.list(userId, req.path, req.recursive);
      if (req.asJson) return yield* jsonBatches(found, req.includeStats);
      for (let i = 0; i === 0 || i < found.entries.length; i += LIST_BATCH) {
        const last = i + LIST_BATCH >= found.entries.length;
        const page = { nextCursor: last ? (found.next ?? '') : '', hasMore: last && found.next !== undefined };
        yield { path: found.path, entries: found.entries.slice(i, i + LIST_BATCH).map((e) => toProto(toEntry(e))), entriesJson: Buffer.alloc(0), ...page };
      }
    },
    statFile: async (req, ctx) => toProto(await workspace.stat(requireUser(ctx), req.path, req.revision)),
    readFile: async function* (req, ctx) {
      const { file, content } = await workspace.read(requireUser(ctx), req.path, req.revision);
      for (let i = 0; i === 0 || i < content.byteLength; i += READ_CHUNK) {
        const first = i === 0;
        yield { path: first ? file.path : '', data: content.subarray(i, i + READ_CHUNK), entry: first ? toProto(file) : undefined };
      }
    },
    openDownload: async (req, ctx) => {
      const { entry, url } = await workspace.openDownload(requireUser(ctx), req.path, req.revision);
      return { entry: toProto(entry), url };
    },
    beginUpload: async (req, ctx) =>
      uploads.begin(requireUser(ctx), {
        path: req.path,
        filename: req.filename,
        onConflict: conflictMode(req.onConflict),
        idleMs: req.idleMs,
        reserveHint: req.reserveHint,
        ifMatch: req.ifMatchSha256,
        ifNoneMatch: req.ifNoneMatch,
      }),
    uploadParts: async (req, ctx) => ({ urls: await uploads.parts(requireUser(ctx), req.uploadId, req.firstPartNumber, req.count) }),
    uploadTail: async (req, ctx) => {
      const { put, get } = await uploads.tail(requireUser(ctx), req.uploadId);
      return { putUrls: put, getUrls: get };
    },
    commitUpload: async (req, ctx) => {
      const stored = await uploads.commit(requireUser(ctx), req.uploadId, { size: req.size, sha256: req.sha256, parts: req.parts, summary: req.summary });
      // Committed with its summary (the uploader summarized the bytes as they passed): nothing to read back.
      if (req.summary.length === 0) search.warm(requireUser(ctx), stored.path);
      ctx.logger.info({ size: stored.size }, 'file uploaded');
      return stored;
    },
    reserveUpload: async (req, ctx) => {
      await uploads.reserve(requireUser(ctx), req.uploadId, req.totalBytes);
      return {};
    },
    abortUpload: async (req, ctx) => {
      await uploads.abort(requireUser(ctx), req.uploadId);
      return {};
    },
    writeFile: async (req, ctx) => {
      // The content is in hand: the commit stores its summary (up to SEARCH_MAX_FILE_BYTES).
      const stored = await uploads.writeFile(requireUser(ctx), req.path, req.content, req.overwrite);
      return toProto(await workspace.stat(requireUser(ctx), stored.path));
    },
    deleteFile: async (req, ctx) => workspace.delete(requireUser(ctx), req.path, req.recursive, req.permanent, req.ifMatchSha256),
    moveFile: async (req, ctx) =>
      workspace.move(requireUser(ctx), 'move', { from: req.from, to: req.to, onConflict: conflictMode(req.onConflict), ifMatch: req.ifMatchSha256, ifMatchTo: req.ifMatchToSha256 }),
    copyFile: async (req, ctx) =>
      req.at
        ? checkpoints.fork(requireUser(ctx), { from: req.from, to: req.to, onConflict: conflictMode(req.onConflict), at: req.at, ifMatch: req.ifMatchSha256, ifMatchTo: req.ifMatchToSha256 })
        : workspace.move(requireUser(ctx), 'copy', { from: req.from, to: req.to, onConflict: conflictMode(req.onConflict), ifMatch: req.ifMatchSha256, ifMatchTo: req.ifMatchToSha256 }),
    createDirectory: async (req, ctx) => {
      const out = await workspace.createDirectory(requireUser(ctx), req.path);
      if (out.created) ctx.logger.info('directory created');
      return out;
    },
    getChangesCursor: async (req, ctx) => ({ cursor: await changes.cursor(requireUser(ctx), req.path) }),
    getChanges: async (req, ctx) => {
      const out = await changes.read(requireUser(ctx), req.cursor, req.limit || 1_000, req.timeoutMs, ctx.signal);
      return { cursor: out.cursor, hasMore: out.hasMore, changes: out.changes.map((c) => ({ ...c, from: c.from ?? '', sha256: c.sha256 ?? '', size: c.size })) };
    },
    listExport: async function* (req, ctx) {
      const items = await workspace.exportItems(requireUser(ctx), req.path);
      // Presigned per message as the caller reads on, so a long export never finds its URLs expired.
      for (let i = 0; i < items.length; i += EXPORT_BATCH) {
        const batch = items.slice(i, i + EXPORT_BATCH);
        yield { items: await Promise.all(batch.map(async (item) => ({ name: item.rel, url: item.key === '' ? '' : await deps.blobs.presignGet(item.key, EXPORT_URL_SECONDS), size: item.size, modifiedAt: item.modifiedAt.toISOString() }))) };
      }
    },
    pinKnowledge: async (req, ctx) => {
      const files = await knowledge.pin(requireUser(ctx), req.agentId, req.paths);
      ctx.logger.info({ agentId: req.agentId, files: files.length }, 'knowledge pinned');
      return { files };
    },
    unpinKnowledge: async (req, ctx) => {
      const removed = await knowledge.removeAgent(requireUser(ctx), req.agentId);
      ctx.logger.info({ agentId: req.agentId, removed }, 'knowledge pins removed');
      return { removed };
    },
    listRevisions: async (req, ctx) => {
      const found = await revisions.list(requireUser(ctx), req.path);
      return { path: found.path, revisions: found.revisions.map((r) => (r.deleted ? { ...r, size: 0, sha256: '', mimeType: '' } : r)) };
    },
    listTrash: async function* (req, ctx) {
      const found = await revisions.trash(requireUser(ctx), req.path, req.recursive);
      for (let i = 0; i === 0 || i < found.entries.length; i += LIST_BATCH) yield { path: found.path, entries: found.entries.slice(i, i + LIST_BATCH) };
    },
    getUsage: async (_req, ctx) => {
      const userId = requireUser(ctx);
      const [files, held] = await Promise.all([uploads.usage(userId), checkpoints.usage(userId)]);
      return { ...files, checkpoints: held.count, checkpointBytes: held.bytes, maxCheckpoints: held.limit };
    },
    createCheckpoint: async (req, ctx) => checkpointProto(await checkpoints.create(requireUser(ctx), req.path, req.label)),
    listCheckpoints: async (req, ctx) => ({ checkpoints: (await checkpoints.list(requireUser(ctx), req.path)).map(checkpointProto) }),
    getCheckpoint: async (req, ctx) => checkpointProto(await checkpoints.get(requireUser(ctx), req.checkpointId)),
    deleteCheckpoint: async (req, ctx) => {
      await checkpoints.delete(requireUser(ctx), req.checkpointId);
      return {};
    },
    rewind: async (req, ctx) => {
      const done = await checkpoints.rewind(requireUser(ctx), req.path, req.to);
      ctx.logger.info({ restored: done.restored, removed: done.removed, checkpointId: done.checkpointId }, 'tree rewound');
      return done;
    },
    searchFiles: async (req, ctx) => {
      const found = await search.search(requireUser(ctx), { path: req.path, q: req.q, regex: req.regex, caseSensitive: req.caseSensitive, glob: req.glob, limit: req.limit, cursor: req.cursor }, ctx.signal);
      return { path: found.path, matches: found.matches, cursor: found.cursor ?? '', hasMore: found.cursor !== undefined, filesSearched: found.filesSearched };
    },
    restoreFile: async (req, ctx) => {
      const userId = requireUser(ctx);
      if (req.recursive) {
        if (req.revision !== '') throw errors.invalidArgument('give either revision or recursive, not both', 'revision');
        const done = await revisions.restoreTree(userId, req.path, req.ifMatchSha256);
        ctx.logger.info({ restored: done.restored }, 'files restored');
        return { path: done.path, size: 0, mimeType: '', sha256: '', revision: '', restored: done.restored };
      }
      if (req.revision === '') throw errors.invalidArgument('revision is required unless recursive is true', 'revision');
      return { ...(await revisions.restore(userId, req.path, req.revision, req.ifMatchSha256)), restored: 1 };
    },
  };
}
