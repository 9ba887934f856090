import { ChangeList, ChangesCursor, ChangesCursorQuery, ChangesQuery } from './changes.schemas.js';
import { changeJson } from './files.json.js';

import { defineRoute, type RouteDef } from '../../api/route.js';
import * as ex from './files.examples.js';
import type { FilesClient } from '../../clients.js';

/** A long poll's deadline beyond its own wait: time to read and answer once the wait is over. */
const CHANGES_GRACE_MS = 5_000;

export function changesRoutes(files: FilesClient): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/agent/files/changes/cursor',
      operationId: 'getChangesCursor',
      summary: 'Take a changes cursor',
      description: 'The position after the latest change, for changes at or below `path` (which need not exist). Take it before listing to keep a copy in step.',
      tag: 'Files',
      query: ChangesCursorQuery,
      example: { query: { path: '/files' }, response: ex.changesCursor },
      responses: { 200: { description: 'The cursor', schema: ChangesCursor } },
      errors: ['INVALID_ARGUMENT', 'INVALID_PATH', 'UNAUTHENTICATED', 'UNAVAILABLE'],
      handler: async ({ query, call }, res) => {
        const out = await files.getChangesCursor({ path: query.path ?? '/files' }, call);
        res.json({ cursor: out.cursor });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agent/files/changes',
      operationId: 'getChanges',
      summary: 'Changes after a cursor (long poll with timeout)',
      description:
        'The changes after `cursor` in commit order, each exactly once, at most `limit`; `cursor` in the answer continues after the last one. With `timeout` ' +
        'and nothing to report, the call waits until a change arrives or the time is up (`changes: []`, same position). Moves into the cursor\'s path are ' +
        '`created`, moves out of it `deleted`. A cursor older than the retained history (at least 7 days and 100,000 changes) → 410 CURSOR_EXPIRED: list again.',
      tag: 'Files',
      query: ChangesQuery,
      example: { query: { cursor: 'opaque-cursor', limit: 100, timeout: 30 }, response: ex.changeList },
      responses: { 200: { description: 'Changes, possibly none', schema: ChangeList } },
      errors: ['INVALID_ARGUMENT', 'UNAUTHENTICATED', 'UNAVAILABLE', 'CURSOR_EXPIRED'],
      handler: async ({ query, call }, res) => {
        const timeoutMs = (query.timeout ?? 0) * 1000;
        // call.signal cancels the wait as soon as the HTTP client goes away.
        const out = await files.getChanges({ cursor: query.cursor, limit: query.limit ?? 0, timeoutMs }, { ...call, deadlineMs: timeoutMs + CHANGES_GRACE_MS });
        res.json({ changes: out.changes.map(changeJson), cursor: out.cursor, hasMore: out.hasMore });
      },
    }),
  ];
}
