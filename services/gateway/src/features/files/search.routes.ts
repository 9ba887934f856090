import { SearchQuery, SearchResult, searchResultExample } from './search.schemas.js';

import { defineRoute, type RouteDef } from '../../api/route.js';
import type { FilesClient } from '../../clients.js';

/** A search reads every candidate file: a large workspace with a pattern that needs no literal text takes longer than the default deadline. */
const SEARCH_DEADLINE_MS = 60_000;

/** Exact content search (docs/api/files.md#search). */
export function searchRoutes(files: FilesClient): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/agent/files/search',
      operationId: 'searchFiles',
      summary: 'Find text in the files (literal or RE2)',
      description:
        'Searches the current files at or below `path` that are valid UTF-8 and at most SEARCH_MAX_FILE_BYTES (default 1 MiB); others are skipped. ' +
        'Matches come by path (byte order), then line, then column; every occurrence on a line is a match, its `column` counted in code points and its ' +
        '`text` the line cut to 500 characters. The answer is exact and sees every write committed before the request. Paged by `limit` and `cursor`.',
      tag: 'Files',
      slot: 'searches',
      query: SearchQuery,
      example: { query: { q: 'TODO', path: '/files', glob: '*.ts' }, response: searchResultExample },
      responses: { 200: { description: 'One page of matches', schema: SearchResult } },
      errors: ['INVALID_ARGUMENT', 'INVALID_PATH', 'FILE_NOT_FOUND', 'UNAUTHENTICATED', 'SEARCH_TOO_EXPENSIVE', 'RATE_LIMITED', 'UNAVAILABLE'],
      handler: async ({ query, call }, res) => {
        const out = await files.searchFiles(
          { path: query.path ?? '/files', q: query.q, regex: query.regex ?? false, caseSensitive: query.caseSensitive ?? false, glob: query.glob ?? '', limit: query.limit ?? 0, cursor: query.cursor ?? '' },
          { ...call, deadlineMs: SEARCH_DEADLINE_MS },
        );
        const matches = out.matches.map((m) => ({ path: m.path, line: m.line, column: m.column, text: m.text, sha256: m.sha256 }));
        res.json({ path: out.path, q: query.q, matches, cursor: out.hasMore ? out.cursor : null, hasMore: out.hasMore, filesSearched: out.filesSearched });
      },
    }),
  ];
}
