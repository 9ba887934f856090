import type { Response } from 'express';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@workspace/platform';
import { OnConflict, type ListFilesResponse } from '@workspace/proto/workspace/files/v1/files';
import type { ObjectStore } from '../../transfer/object-store.js';
import { parseWith } from '../../api/validate.js';
import { filesRoutes } from './files.routes.js';
import type { RouteDef } from '../../api/route.js';
import type { FilesClient } from '../../clients.js';

/** Runs one route's handler as the router would, against a fake files client; returns the JSON it sent. */
async function run(files: Partial<Record<keyof FilesClient, unknown>>, operationId: string, input: { query?: object; body?: object }) {
  const routes = filesRoutes({ files: files as FilesClient, projects: {} as never, store: {} as ObjectStore, logger: createLogger('test', 'silent'), uploadIdleTimeoutMs: 1000 });
  const route = routes.find((r) => r.operationId === operationId) as RouteDef;
  let sent: unknown;
  // A listing of several messages streams (write, then end); one of one message is sent whole.
  const written: Buffer[] = [];
  const res = {
    json: (body: unknown) => void (sent = body),
    type: () => res,
    send: (bytes: Buffer) => void (sent = JSON.parse(bytes.toString('utf8'))),
    write: (bytes: Buffer) => written.push(bytes) > 0,
    end: (bytes: Buffer) => void (sent = JSON.parse(Buffer.concat([...written, bytes]).toString('utf8'))),
  } as unknown as Response;
  const call = { userId: 'u-1', requestId: 'r-1', signal: new AbortController().signal };
  const query = route.query ? parseWith(route.query, input.query ?? {}, 'query') : {};
  const body = route.body ? parseWith(route.body, input.body ?? {}, 'body') : undefined;
  await route.handler({ params: {}, query, body, call, req: { get: () => undefined } as never }, res);
  return sent as Record<string, unknown>;
}

/** An entry as the files service renders it for the route (`as_json`). */
const file = (path: string) => JSON.stringify({ path, name: path.split('/').pop()!, type: 'file', size: 1, modifiedAt: 't', mimeType: 'text/plain', sha256: 'ab'.repeat(32) });

function lister(pages: (Partial<ListFilesResponse> & { json?: string[] })[], seen: unknown[]) {
  return {
    listFiles: (request: unknown) => {
      seen.push(request);
      return (async function* () {
        for (const { json = [], ...page } of pages) yield { path: '/files', entries: [], entriesJson: Buffer.from(json.join(',')), nextCursor: '', hasMore: false, ...page };
      })();
    },
  };
}

describe('files routes', () => {
  it('list — without limit or cursor: every batch, no paging fields, as before', async () => {
    const seen: unknown[] = [];
    const out = await run(lister([{ json: [file('/files/a')] }, { json: [file('/files/b')] }], seen), 'listFiles', {});
    expect(seen).toEqual([{ path: '/files', recursive: false, paged: false, limit: 0, cursor: '', asJson: true, includeStats: true }]);
    expect(out).toEqual({ path: '/files', recursive: false, entries: [expect.objectContaining({ path: '/files/a', sha256: 'ab'.repeat(32) }), expect.objectContaining({ path: '/files/b' })] });
  });

  it('list — with limit or cursor: paged, with cursor (null on the last page) and hasMore', async () => {
    const seen: unknown[] = [];
    const more = await run(lister([{ json: [file('/files/a')] }, { json: [file('/files/b')], nextCursor: 'c2', hasMore: true }], seen), 'listFiles', { query: { limit: '2' } });
    expect(seen[0]).toEqual({ path: '/files', recursive: false, paged: true, limit: 2, cursor: '', asJson: true, includeStats: true });
    expect(more).toMatchObject({ cursor: 'c2', hasMore: true });
    const last = await run(lister([{ json: [] }], seen), 'listFiles', { query: { cursor: 'c2', includeStats: 'false' } });
    expect(seen[1]).toEqual({ path: '/files', recursive: false, paged: true, limit: 0, cursor: 'c2', asJson: true, includeStats: false });
    expect(last).toEqual({ path: '/files', recursive: false, entries: [], cursor: null, hasMore: false });
  });

  it('move and copy — onConflict defaults to error; the answer names the source and where it landed', async () => {
    const seen: unknown[] = [];
    const answer = async (request: unknown) => (seen.push(request), { from: '/files/a', path: '/files/b-1.txt' });
    const client = { moveFile: answer, copyFile: answer };
    expect(await run(client, 'moveFile', { body: { from: '/files/a/', to: '/files/b.txt' } })).toEqual({ success: true, from: '/files/a', path: '/files/b-1.txt' });
    await run(client, 'copyFile', { body: { from: '/files/a', to: '/files/b.txt', onConflict: 'uuid' } });
    await run(client, 'copyFile', { body: { from: '/files/a', to: '/files/c', at: 'ckp_00000000000000000000000000000000' } });
    expect(seen).toEqual([
      { from: '/files/a/', to: '/files/b.txt', onConflict: OnConflict.ON_CONFLICT_ERROR, at: '' },
      { from: '/files/a', to: '/files/b.txt', onConflict: OnConflict.ON_CONFLICT_UUID, at: '' },
      { from: '/files/a', to: '/files/c', onConflict: OnConflict.ON_CONFLICT_ERROR, at: 'ckp_00000000000000000000000000000000' },
    ]);
  });

  it('changes — the wait goes as timeoutMs, the deadline covers it, the client going away cancels it', async () => {
    const seen: { request: unknown; ctx: { deadlineMs?: number; signal?: AbortSignal } }[] = [];
    const client = {
      getChanges: async (request: unknown, ctx: { deadlineMs?: number; signal?: AbortSignal }) => {
        seen.push({ request, ctx });
        return { changes: [{ type: 'deleted', kind: 'directory', path: '/files/d', from: '', at: 't', sha256: '' }], cursor: 'c9', hasMore: false };
      },
      getChangesCursor: async (request: unknown) => (seen.push({ request, ctx: {} }), { cursor: 'c0' }),
    };
    const out = await run(client, 'getChanges', { query: { cursor: 'c1', timeout: '30' } });
    expect(seen[0]?.request).toEqual({ cursor: 'c1', limit: 0, timeoutMs: 30_000 });
    expect(seen[0]?.ctx.deadlineMs).toBeGreaterThan(30_000);
    expect(seen[0]?.ctx.signal).toBeInstanceOf(AbortSignal);
    expect(out).toEqual({ changes: [{ type: 'deleted', kind: 'directory', path: '/files/d', at: 't' }], cursor: 'c9', hasMore: false });
    expect(await run(client, 'getChangesCursor', {})).toEqual({ cursor: 'c0' });
    expect(seen[1]?.request).toEqual({ path: '/files' });
  });
});
