import { Checkpoint, CheckpointIdParams, CheckpointList, CheckpointsQuery, CreateCheckpointBody, RewindBody, RewindResult } from './checkpoints.schemas.js';

import { defineRoute, type RouteDef } from '../../api/route.js';
import type { FilesClient } from '../../clients.js';

/** A checkpoint or a rewind of a large tree is one atomic step of O(N) index work: more than the default deadline. */
const TREE_DEADLINE_MS = 60_000;

const COMMON_ERRORS = ['INVALID_ARGUMENT', 'INVALID_PATH', 'UNAUTHENTICATED', 'UNAVAILABLE'] as const;

const CHECKPOINT = {
  checkpointId: 'ckp_3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c',
  path: '/files/projects/Home',
  label: 'before the refactor',
  createdAt: '2024-05-01T12:00:00.000Z',
  files: 12,
  bytes: 48213,
};
const REWOUND = { success: true, path: '/files/projects/Home', to: CHECKPOINT.checkpointId, restored: 3, removed: 1, unchanged: 8, checkpointId: 'ckp_9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f' };

/** Checkpoints and rewind (docs/api/files.md#checkpoints, docs/api/files.md#rewind). */
export function checkpointsRoutes(files: FilesClient): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/agent/files/checkpoints',
      operationId: 'createCheckpoint',
      summary: 'Take a checkpoint of a tree',
      description:
        'Records which revision every file at or below `path` has now, and the folders created explicitly there, without copying a byte. ' +
        'The revisions it names are kept (neither FILE_REVISIONS ' +
        'nor FILE_REVISION_DAYS trims them) while it exists; their bytes count once toward FILE_QUOTA_BYTES. At most MAX_CHECKPOINTS (default 100) per ' +
        'user: one more → 403 QUOTA_EXCEEDED. Rewind to it with `files/rewind`, or fork it with `files/copy` and `at`. A tree of more than ' +
        'MAX_TREE_ENTRIES (default 10,000) entries below `path` → 400 INVALID_ARGUMENT (`details.field` `path`, `details.limit`): take a folder below it.',
      tag: 'Files',
      idempotent: true,
      body: CreateCheckpointBody,
      example: { body: { path: '/files/projects/Home', label: 'before the refactor' }, response: CHECKPOINT },
      responses: { 201: { description: 'Taken', schema: Checkpoint } },
      errors: [...COMMON_ERRORS, 'FILE_NOT_FOUND', 'QUOTA_EXCEEDED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'],
      handler: async ({ body, call }, res) => {
        const out = await files.createCheckpoint({ path: body.path ?? '/files', label: body.label ?? '' }, { ...call, deadlineMs: TREE_DEADLINE_MS });
        res.status(201).json(checkpointJson(out));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agent/files/checkpoints',
      operationId: 'listCheckpoints',
      summary: 'The checkpoints taken at or below a path, newest first',
      tag: 'Files',
      query: CheckpointsQuery,
      example: { query: { path: '/files' }, response: { checkpoints: [CHECKPOINT] } },
      responses: { 200: { description: 'The checkpoints', schema: CheckpointList } },
      errors: [...COMMON_ERRORS],
      handler: async ({ query, call }, res) => {
        const out = await files.listCheckpoints({ path: query.path ?? '/files' }, call);
        res.json({ checkpoints: out.checkpoints.map(checkpointJson) });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agent/files/checkpoints/{checkpointId}',
      operationId: 'getCheckpoint',
      summary: 'One checkpoint',
      tag: 'Files',
      params: CheckpointIdParams,
      example: { params: { checkpointId: CHECKPOINT.checkpointId }, response: CHECKPOINT },
      responses: { 200: { description: 'The checkpoint', schema: Checkpoint } },
      errors: ['UNAUTHENTICATED', 'UNAVAILABLE', 'CHECKPOINT_NOT_FOUND'],
      handler: async ({ params, call }, res) => {
        res.json(checkpointJson(await files.getCheckpoint({ checkpointId: params.checkpointId }, call)));
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/agent/files/checkpoints/{checkpointId}',
      operationId: 'deleteCheckpoint',
      summary: 'Delete a checkpoint',
      description: 'The revisions only it kept are then left to FILE_REVISIONS and FILE_REVISION_DAYS again. The files are not touched.',
      tag: 'Files',
      params: CheckpointIdParams,
      example: { params: { checkpointId: CHECKPOINT.checkpointId } },
      responses: { 204: { description: 'Deleted' } },
      errors: ['UNAUTHENTICATED', 'UNAVAILABLE', 'CHECKPOINT_NOT_FOUND'],
      handler: async ({ params, call }, res) => {
        await files.deleteCheckpoint({ checkpointId: params.checkpointId }, { ...call, deadlineMs: TREE_DEADLINE_MS });
        res.status(204).end();
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/agent/files/rewind',
      operationId: 'rewindFiles',
      summary: 'Make a tree what it was at a checkpoint or a time',
      description:
        'In one atomic step the tree at `path` becomes exactly what it was at `to`: every file of then is back at its path with its content (files moved ' +
        'or deleted since come back; differing content comes back as a new revision), and every file that did not exist then goes to the trash ' +
        '(restorable). Folders created explicitly (`files/directories`) are part of the tree: those of then exist again, those made since are ' +
        'removed; `restored`, `removed` and `unchanged` count files. ' +
        'A checkpoint of `path` is taken just before (`checkpointId`): rewind to it to undo. One `rewound` change in the feed and one ' +
        '`file.rewound` event. `to` older than FILE_REVISION_DAYS → 410 HISTORY_EXPIRED; a checkpoint not taken at `path` or above it → 400 ' +
        '(`details.field` = `to`); a file above `path` → 409 PATH_CONFLICT. The checkpoint taken before counts toward MAX_CHECKPOINTS. The tree now ' +
        'and the tree it rebuilds (for a time, also the paths with a history below `path`, and those with a folder history) each at most ' +
        'MAX_TREE_ENTRIES (default 10,000) entries, else 400 INVALID_ARGUMENT (`details.field` `path`, `details.limit`); the files that come back ' +
        'at paths that hold none, with their folders and the explicit folders of then, ' +
        'count toward MAX_FILES (403 QUOTA_EXCEEDED when they would pass it). Refused, nothing changes.',
      tag: 'Files',
      body: RewindBody,
      example: { body: { path: '/files/projects/Home', to: CHECKPOINT.checkpointId }, response: REWOUND },
      responses: { 200: { description: 'Rewound', schema: RewindResult } },
      errors: [...COMMON_ERRORS, 'CHECKPOINT_NOT_FOUND', 'HISTORY_EXPIRED', 'PATH_CONFLICT', 'QUOTA_EXCEEDED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'],
      handler: async ({ body, call }, res) => {
        const out = await files.rewind({ path: body.path, to: body.to }, { ...call, deadlineMs: TREE_DEADLINE_MS });
        res.json({ success: true, path: out.path, to: out.to, restored: out.restored, removed: out.removed, unchanged: out.unchanged, checkpointId: out.checkpointId });
      },
    }),
  ];
}

function checkpointJson(c: { checkpointId: string; path: string; label: string; createdAt: string; files: number; bytes: number }) {
  return { checkpointId: c.checkpointId, path: c.path, label: c.label, createdAt: c.createdAt, files: c.files, bytes: c.bytes };
}
