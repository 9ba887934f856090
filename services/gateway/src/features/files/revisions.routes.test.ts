import type { Response } from 'express';
import { describe, expect, it } from 'vitest';
import { parseWith } from '../../api/validate.js';

import { revisionsRoutes } from './revisions.routes.js';
import type { RouteDef } from '../../api/route.js';
import type { FilesClient } from '../../clients.js';

/** Runs one route's handler as the router would (validation included), against a fake files client; returns the JSON it sent. */
async function run(files: Partial<Record<keyof FilesClient, unknown>>, operationId: string, input: { query?: object; body?: object }) {
  const route = revisionsRoutes(files as FilesClient).find((r) => r.operationId === operationId) as RouteDef;
  let sent: unknown;
  const res = { json: (body: unknown) => void (sent = body) } as unknown as Response;
  const call = { userId: 'u-1', requestId: 'r-1', signal: new AbortController().signal };
  const query = route.query ? parseWith(route.query, input.query ?? {}, 'query') : {};
  const body = route.body ? parseWith(route.body, input.body ?? {}, 'body') : undefined;
  await route.handler({ params: {}, query, body, call, req: { get: () => undefined } as never }, res);
  return sent as Record<string, unknown>;
}

const SHA = 'ab'.repeat(32);

describe('revisions routes', () => {
  it('revisions — a deletion carries no content fields; a write carries size, sha256 and mimeType', async () => {
    const client = {
      listRevisions: async () => ({
        path: '/files/a.md',
        revisions: [
          { revision: 'rev_2', deleted: true, modifiedAt: 't2', size: 0, sha256: '', mimeType: '' },
          { revision: 'rev_1', deleted: false, modifiedAt: 't1', size: 3, sha256: SHA, mimeType: 'text/markdown' },
        ],
      }),
    };
    expect(await run(client, 'listFileRevisions', { query: { path: '/files/a.md' } })).toEqual({
      path: '/files/a.md',
      revisions: [
        { revision: 'rev_2', deleted: true, modifiedAt: 't2' },
        { revision: 'rev_1', deleted: false, modifiedAt: 't1', size: 3, sha256: SHA, mimeType: 'text/markdown' },
      ],
    });
  });

  it('trash — path defaults to /files, recursive to false; every batch is collected', async () => {
    const seen: unknown[] = [];
    const entry = (path: string) => ({ path, name: path.slice(7), size: 1, sha256: SHA, mimeType: 'text/plain', deletedAt: 't', revision: 'rev_1' });
    const client = {
      listTrash: (request: unknown) => {
        seen.push(request);
        return (async function* () {
          yield { path: '/files', entries: [entry('/files/a')] };
          yield { path: '/files', entries: [entry('/files/b')] };
        })();
      },
    };
    const out = await run(client, 'listTrash', {});
    expect(seen).toEqual([{ path: '/files', recursive: false }]);
    expect(out).toEqual({ path: '/files', recursive: false, entries: [entry('/files/a'), entry('/files/b')] });
  });

  it('restore — either a revision or recursive: true, never both or neither (400 naming revision)', async () => {
    const seen: { request: unknown; deadlineMs?: number }[] = [];
    const client = {
      restoreFile: async (request: { recursive: boolean }, ctx: { deadlineMs?: number }) => {
        seen.push({ request, deadlineMs: ctx.deadlineMs });
        return request.recursive
          ? { path: '/files/d', size: 0, mimeType: '', sha256: '', revision: '', restored: 1000 }
          : { path: '/files/d/a.md', size: 3, mimeType: 'text/markdown', sha256: SHA, revision: 'rev_9', restored: 1 };
      },
    };
    expect(await run(client, 'restoreFile', { body: { path: '/files/d/a.md', revision: 'rev_1' } })).toEqual({
      success: true,
      path: '/files/d/a.md',
      size: 3,
      mimeType: 'text/markdown',
      sha256: SHA,
      revision: 'rev_9',
    });
    expect(await run(client, 'restoreFile', { body: { path: '/files/d', recursive: true } })).toEqual({ success: true, path: '/files/d', restored: 1000 });
    expect(seen.map((s) => s.request)).toEqual([
      { path: '/files/d/a.md', revision: 'rev_1', recursive: false },
      { path: '/files/d', revision: '', recursive: true },
    ]);
    expect(seen[1]!.deadlineMs).toBeGreaterThanOrEqual(60_000);
    for (const body of [{ path: '/files/d' }, { path: '/files/d', recursive: false }, { path: '/files/d', recursive: true, revision: 'rev_1' }]) {
      await expect(run(client, 'restoreFile', { body }), JSON.stringify(body)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'revision' } });
    }
    await expect(run(client, 'restoreFile', { body: { path: '/files/d', recursive: true, extra: 1 } })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'extra' } });
    expect(seen).toHaveLength(2);
  });
});
