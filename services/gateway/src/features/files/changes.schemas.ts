import { z } from 'zod';
import { integerQuery, timestamp, workspacePath } from '../../api/schemas.js';

/** The longest a changes request may wait for a change (docs/api/files.md#changes), in seconds. */
export const MAX_CHANGES_TIMEOUT_S = 60;

export const ChangesCursorQuery = z
  .object({ path: workspacePath.optional().describe('default `/files`: changes at or below this path; it need not exist') })
  .strict();

export const ChangesCursor = z
  .object({ cursor: z.string().describe('Opaque: the position after the latest change; pass it to GET /v1/agent/files/changes') })
  .meta({ id: 'ChangesCursor' });

export const ChangesQuery = z
  .object({
    cursor: z.string().min(1).describe('From GET /v1/agent/files/changes/cursor or the previous answer'),
    limit: integerQuery('limit', 1, 10_000).optional().describe('1–10,000, default 1,000'),
    timeout: integerQuery('timeout', 0, MAX_CHANGES_TIMEOUT_S)
      .optional()
      .describe('Seconds, 0–60, default 0: with no change to report, wait this long for one (a long poll) before answering `changes: []`'),
  })
  .strict();

export const Change = z
  .object({
    type: z.enum(['created', 'updated', 'deleted', 'moved', 'rewound']).describe('`rewound`: the tree at `path` was rewound (docs/api/files.md#rewind); list it again'),
    kind: z.enum(['file', 'directory']),
    path: z.string().describe('The path after the change (the old path for `deleted`)'),
    from: z.string().optional().describe('`moved` only: the old path'),
    at: timestamp.describe('When the change was committed'),
    size: z.number().int().optional().describe('A created or updated file only'),
    sha256: z.string().optional().describe('A created or updated file only: SHA-256 of its bytes, 64 lowercase hex'),
  })
  .meta({ id: 'FileChange' });

export const ChangeList = z
  .object({
    changes: z.array(Change).describe('In commit order; one operation is one change (a directory move is one `moved` of kind `directory`)'),
    cursor: z.string().describe('Continues after the last change returned (unchanged when there was none)'),
    hasMore: z.boolean().describe('More changes follow right away: ask again without waiting'),
  })
  .meta({
    id: 'FileChanges',
    examples: [
      {
        changes: [
          { type: 'created', kind: 'file', path: '/files/notes.md', at: '2024-05-01T12:00:00.000Z', size: 5, sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824' },
          { type: 'moved', kind: 'directory', path: '/files/archive', from: '/files/old', at: '2024-05-01T12:00:01.250Z' },
        ],
        cursor: 'opaque-cursor',
        hasMore: false,
      },
    ],
  });
