import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { restartService } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { put, read, sha256 } from './support/files-api.js';
import { body, mcpConnect, mcpPost, type McpConnection } from './support/mcp.js';
import { killProcesses, reviveProcesses } from './support/processes.js';
import { startStack, type ApiUser, type Stack } from './support/stack.js';

const MAX_UPLOAD = 256 * 1024;
const ORIGIN = 'https://app.example.com';
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ filesEnv: { MAX_UPLOAD_BYTES: String(MAX_UPLOAD) }, gatewayEnv: { CORS_ORIGINS: ORIGIN, MCP_AUTHORIZATION_SERVERS: 'https://auth.example.com,https://login.example.com' } });
});
afterAll(async () => {
  await stack?.stop();
});

const REV = /^rev_[0-9a-f]{32}$/;
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

async function session(u: ApiUser): Promise<McpConnection> {
  return mcpConnect(stack.url, u);
}

/** The error a failed tool reports. */
function failure(answer: { isError?: boolean; structuredContent?: { error?: { code: string; details?: Record<string, unknown> } } }) {
  expect(answer.isError, JSON.stringify(answer)).toBe(true);
  return answer.structuredContent!.error!;
}

describe('mcp — tools', () => {
  it('mcp — tools/list: every tool with input and output schemas and true annotations', async () => {
    const c = await session(await stack.user());
    const { tools } = await c.client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ['read_file', 'read_text_file', 'read_media_file', 'read_multiple_files', 'write_file', 'edit_file', 'create_directory', 'list_directory', 'list_directory_with_sizes', 'directory_tree', 'move_file', 'search_files', 'get_file_info', 'list_allowed_directories', 'copy_file', 'delete_file', 'list_revisions', 'restore_file', 'grep', 'create_checkpoint', 'rewind', 'list_projects']) {
      expect(names).toContain(name);
    }
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema?.type).toBe('object');
      expect(typeof t.annotations?.readOnlyHint).toBe('boolean');
      expect(typeof t.annotations?.destructiveHint).toBe('boolean');
      expect(typeof t.annotations?.idempotentHint).toBe('boolean');
    }
    const hints = (n: string) => tools.find((t) => t.name === n)!.annotations!;
    expect(hints('read_text_file')).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(hints('write_file')).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(hints('delete_file')).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(hints('edit_file')).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    expect(hints('grep')).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(hints('rewind')).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    await c.close();
  });

  it('mcp — write_file, read_text_file (head, tail, revision), get_file_info: sha256 and revision throughout; HTTP sees the same bytes', async () => {
    const u = await stack.user();
    const c = await session(u);
    const w = await c.call('write_file', { path: '/files/notes/a.md', content: 'one\ntwo\nthree\n' });
    expect(w.isError, JSON.stringify(w)).toBeFalsy();
    expect(w.structuredContent).toMatchObject({ path: '/files/notes/a.md', size: 14, mimeType: 'text/markdown', sha256: sha256('one\ntwo\nthree\n') });
    expect(w.structuredContent.revision).toMatch(REV);
    expect((await read(u, '/files/notes/a.md')).body.content).toBe('one\ntwo\nthree\n');
    const r = await c.call('read_text_file', { path: '/files/notes/a.md' });
    expect(r.structuredContent).toMatchObject({ content: 'one\ntwo\nthree\n', sha256: w.structuredContent.sha256, revision: w.structuredContent.revision });
    expect(r.content[0]!.text).toBe('one\ntwo\nthree\n');
    expect((await c.call('read_text_file', { path: '/files/notes/a.md', head: 2 })).structuredContent.content).toBe('one\ntwo');
    expect((await c.call('read_text_file', { path: '/files/notes/a.md', tail: 1 })).structuredContent.content).toBe('three');
    expect((await c.call('read_text_file', { path: '/files/notes/a.md', tail: 2 })).structuredContent.content).toBe('two\nthree');
    expect(failure(await c.call('read_text_file', { path: '/files/notes/a.md', head: 1, tail: 1 })).code).toBe('INVALID_ARGUMENT');
    const w2 = await c.call('write_file', { path: '/files/notes/a.md', content: 'new\n' });
    const old = await c.call('read_text_file', { path: '/files/notes/a.md', revision: w.structuredContent.revision });
    expect(old.structuredContent).toMatchObject({ content: 'one\ntwo\nthree\n', revision: w.structuredContent.revision });
    const info = await c.call('get_file_info', { path: '/files/notes/a.md' });
    expect(info.structuredContent).toMatchObject({ type: 'file', isFile: true, size: 4, sha256: sha256('new\n'), revision: w2.structuredContent.revision });
    expect((await c.call('get_file_info', { path: '/files/notes' })).structuredContent).toMatchObject({ type: 'directory', isDirectory: true });
    await c.close();
  });

  it('mcp — write_file with expectedSha256: commits onto those bytes only, else PRECONDITION_FAILED and nothing changes', async () => {
    const u = await stack.user();
    const c = await session(u);
    const first = await put(stack, u, '/files/p.txt', 'v1');
    const ok = await c.call('write_file', { path: '/files/p.txt', content: 'v2', expectedSha256: first.sha256 });
    expect(ok.isError, JSON.stringify(ok)).toBeFalsy();
    const stale = failure(await c.call('write_file', { path: '/files/p.txt', content: 'v3', expectedSha256: first.sha256 }));
    expect(stale.code).toBe('PRECONDITION_FAILED');
    expect(stale.details?.currentSha256).toBe(sha256('v2'));
    expect((await read(u, '/files/p.txt')).body.content).toBe('v2');
    await c.close();
  });

  it('mcp — edit_file: a unified diff; dryRun changes nothing; an oldText not found exactly once → EDIT_NOT_APPLICABLE with its index, nothing changes', async () => {
    const u = await stack.user();
    const c = await session(u);
    await put(stack, u, '/files/e.txt', 'alpha\nbeta\ngamma\nbeta2\n');
    const dry = await c.call('edit_file', { path: '/files/e.txt', edits: [{ oldText: 'alpha', newText: 'ALPHA' }], dryRun: true });
    expect(dry.structuredContent.diff).toContain('-alpha');
    expect(dry.structuredContent.diff).toContain('+ALPHA');
    expect((await read(u, '/files/e.txt')).body.content).toBe('alpha\nbeta\ngamma\nbeta2\n');
    const notFound = failure(await c.call('edit_file', { path: '/files/e.txt', edits: [{ oldText: 'alpha', newText: 'A' }, { oldText: 'delta', newText: 'D' }] }));
    expect(notFound).toMatchObject({ code: 'EDIT_NOT_APPLICABLE', details: { edit: 1 } });
    const twice = failure(await c.call('edit_file', { path: '/files/e.txt', edits: [{ oldText: 'beta', newText: 'B' }] }));
    expect(twice).toMatchObject({ code: 'EDIT_NOT_APPLICABLE', details: { edit: 0 } });
    expect((await read(u, '/files/e.txt')).body.content).toBe('alpha\nbeta\ngamma\nbeta2\n');
    const done = await c.call('edit_file', { path: '/files/e.txt', edits: [{ oldText: 'alpha', newText: 'ALPHA' }, { oldText: 'ALPHA\nbeta\n', newText: 'ALPHA\nBETA\n' }] });
    expect(done.isError, JSON.stringify(done)).toBeFalsy();
    expect(done.structuredContent).toMatchObject({ sha256: sha256('ALPHA\nBETA\ngamma\nbeta2\n'), dryRun: false });
    expect(done.structuredContent.revision).toMatch(REV);
    expect(done.content[0]!.text).toContain('@@');
    expect((await read(u, '/files/e.txt')).body.content).toBe('ALPHA\nBETA\ngamma\nbeta2\n');
    expect(failure(await c.call('edit_file', { path: '/files/e.txt', edits: [{ oldText: 'gamma', newText: 'G' }], expectedSha256: '0'.repeat(64) })).code).toBe('PRECONDITION_FAILED');
    await c.close();
  });

  it('mcp — listing tools: list_directory, list_directory_with_sizes, directory_tree, search_files', async () => {
    const u = await stack.user();
    const c = await session(u);
    await put(stack, u, '/files/t/a.md', 'aaaa');
    await put(stack, u, '/files/t/sub/b.md', 'bb');
    await put(stack, u, '/files/t/sub/c.txt', 'c');
    await put(stack, u, '/files/t/node_modules/x.md', 'x');
    const ls = await c.call('list_directory', { path: '/files/t' });
    expect(ls.content[0]!.text).toBe('[FILE] a.md\n[DIR] node_modules\n[DIR] sub');
    const sized = await c.call('list_directory_with_sizes', { path: '/files/t', sortBy: 'size' });
    expect(sized.structuredContent).toMatchObject({ totalFiles: 1, totalDirectories: 2, combinedSize: 4 });
    expect(sized.content[0]!.text).toContain('Combined size: 4 B');
    const tree = await c.call('directory_tree', { path: '/files/t', excludePatterns: ['node_modules'] });
    expect(tree.structuredContent.tree).toEqual([
      { name: 'a.md', type: 'file' },
      { name: 'sub', type: 'directory', children: [{ name: 'b.md', type: 'file' }, { name: 'c.txt', type: 'file' }] },
    ]);
    // As the reference server reads a pattern: relative to `path`, `*` within one folder.
    expect((await c.call('search_files', { path: '/files/t', pattern: '*.md' })).structuredContent.matches).toEqual(['/files/t/a.md']);
    const found = await c.call('search_files', { path: '/files/t', pattern: '**/*.md', excludePatterns: ['node_modules'] });
    expect(found.structuredContent.matches).toEqual(['/files/t/a.md', '/files/t/sub/b.md']);
    expect((await c.call('search_files', { path: '/files/t', pattern: 'sub/**/*.txt' })).structuredContent.matches).toEqual(['/files/t/sub/c.txt']);
    expect((await c.call('search_files', { path: '/files/t', pattern: '*.pdf' })).content[0]!.text).toBe('No matches found');
    await c.close();
  });

  it('mcp — move_file, copy_file, delete_file, list_revisions, restore_file, list_projects, read_multiple_files, read_media_file', async () => {
    const u = await stack.user();
    const c = await session(u);
    await put(stack, u, '/files/m/a.txt', 'A');
    await put(stack, u, '/files/m/taken.txt', 'T');
    expect((await c.call('copy_file', { source: '/files/m/a.txt', destination: '/files/m/b.txt' })).structuredContent).toEqual({ success: true, from: '/files/m/a.txt', path: '/files/m/b.txt' });
    expect(failure(await c.call('move_file', { source: '/files/m/b.txt', destination: '/files/m/taken.txt' })).code).toBe('FILE_EXISTS');
    expect((await c.call('move_file', { source: '/files/m/b.txt', destination: '/files/n/b.txt' })).structuredContent.path).toBe('/files/n/b.txt');
    expect((await read(u, '/files/n/b.txt')).body.content).toBe('A');
    expect((await c.call('delete_file', { path: '/files/n/b.txt' })).structuredContent).toEqual({ success: true, path: '/files/n/b.txt' });
    expect(failure(await c.call('delete_file', { path: '/files/m' })).code).toBe('DIRECTORY_NOT_EMPTY');
    const revs = await c.call('list_revisions', { path: '/files/n/b.txt' });
    expect(revs.structuredContent.revisions[0]).toMatchObject({ deleted: true });
    const restored = await c.call('restore_file', { path: '/files/n/b.txt' });
    expect(restored.structuredContent).toMatchObject({ success: true, path: '/files/n/b.txt', sha256: sha256('A') });
    expect((await read(u, '/files/n/b.txt')).body.content).toBe('A');
    const made = await c.call('create_directory', { path: '/files/empty/deep' });
    expect(made.structuredContent).toEqual({ path: '/files/empty/deep', created: true });
    expect((await c.call('create_directory', { path: '/files/empty/deep' })).structuredContent).toEqual({ path: '/files/empty/deep', created: false });
    expect((await c.call('list_directory', { path: '/files/empty' })).content[0]!.text).toBe('[DIR] deep');
    expect(failure(await c.call('create_directory', { path: '/files/m/a.txt/below' })).code).toBe('PATH_CONFLICT');
    const projects = await c.call('list_projects', {});
    expect(projects.structuredContent.projects.map((p: { name: string }) => p.name)).toContain('Home');
    const many = await c.call('read_multiple_files', { paths: ['/files/m/a.txt', '/files/absent.txt'] });
    expect(many.isError).toBeFalsy();
    expect(many.structuredContent.files[0]).toMatchObject({ path: '/files/m/a.txt', content: 'A' });
    expect(many.structuredContent.files[1].error.code).toBe('FILE_NOT_FOUND');
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    await put(stack, u, '/files/img.png', png);
    const media = await c.call('read_media_file', { path: '/files/img.png' });
    expect(media.content[0]).toEqual({ type: 'image', data: png.toString('base64'), mimeType: 'image/png' });
    expect(media.structuredContent).toMatchObject({ sha256: sha256(png), mimeType: 'image/png' });
    // The revision comes with the bytes read: the one list_revisions names newest.
    const pngRevisions = await c.call('list_revisions', { path: '/files/img.png' });
    expect(media.structuredContent.revision).toBe(pngRevisions.structuredContent.revisions[0].revision);
    expect(many.structuredContent.files[0].revision).toBe((await c.call('list_revisions', { path: '/files/m/a.txt' })).structuredContent.revisions[0].revision);
    await c.close();
  });
});

describe('mcp — search, checkpoints and rewind', () => {
  it('mcp — grep finds content as the search route does; create_checkpoint and rewind bring a tree back, and the rewind is undoable', async () => {
    const u = await stack.user();
    const c = await session(u);
    await put(stack, u, '/files/g/a.ts', 'const needle = 1;\nconst other = 2;\n');
    await put(stack, u, '/files/g/b.md', 'no match here\nNeedle again\n');
    const found = await c.call('grep', { path: '/files/g', pattern: 'needle' });
    expect(found.isError, JSON.stringify(found)).toBeFalsy();
    expect(found.structuredContent.matches.map((m: { path: string; line: number; column: number }) => [m.path, m.line, m.column])).toEqual([
      ['/files/g/a.ts', 1, 7],
      ['/files/g/b.md', 2, 1],
    ]);
    const http = await u.request('GET', `/v1/agent/files/search?path=%2Ffiles%2Fg&q=needle`);
    expect(found.structuredContent.matches).toEqual(http.body.matches);
    expect((await c.call('grep', { path: '/files/g', pattern: 'needle', caseSensitive: true, glob: '*.md' })).structuredContent.matches).toEqual([]);
    expect(failure(await c.call('grep', { pattern: '(a)\\1', regex: true })).code).toBe('INVALID_ARGUMENT');

    const ckp = await c.call('create_checkpoint', { path: '/files/g', label: 'before' });
    expect(ckp.isError, JSON.stringify(ckp)).toBeFalsy();
    expect(ckp.structuredContent).toMatchObject({ path: '/files/g', label: 'before', files: 2 });
    expect(ckp.structuredContent.checkpointId).toMatch(/^ckp_[0-9a-f]{32}$/);
    await put(stack, u, '/files/g/a.ts', 'rewritten');
    await put(stack, u, '/files/g/new.txt', 'new');
    const back = await c.call('rewind', { path: '/files/g', to: ckp.structuredContent.checkpointId });
    expect(back.isError, JSON.stringify(back)).toBeFalsy();
    expect(back.structuredContent).toMatchObject({ success: true, path: '/files/g', restored: 1, removed: 1, unchanged: 1 });
    expect((await read(u, '/files/g/a.ts')).body.content).toBe('const needle = 1;\nconst other = 2;\n');
    expect((await read(u, '/files/g/new.txt')).status).toBe(404);
    await c.call('rewind', { path: '/files/g', to: back.structuredContent.checkpointId });
    expect((await read(u, '/files/g/new.txt')).body.content).toBe('new');
    expect(failure(await c.call('rewind', { path: '/files/g', to: 'ckp_' + '0'.repeat(32) })).code).toBe('CHECKPOINT_NOT_FOUND');
    await c.close();
  });
});

describe('mcp — errors and hostile input', () => {
  it('mcp — tool failures are isError results with the API code; bad arguments INVALID_ARGUMENT with the field; an unknown tool -32602', async () => {
    const c = await session(await stack.user());
    expect(failure(await c.call('read_text_file', { path: '/files/none.txt' })).code).toBe('FILE_NOT_FOUND');
    expect(failure(await c.call('read_text_file', { path: '/files/../etc/passwd' })).code).toBe('INVALID_PATH');
    expect(failure(await c.call('read_text_file', { path: '/files' })).code).toBe('IS_A_DIRECTORY');
    const bad = failure(await c.call('read_text_file', { path: 42 }));
    expect(bad).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'path' } });
    expect(failure(await c.call('edit_file', { path: '/files/x', edits: [{ oldText: 1 }] })).details?.field).toMatch(/^edits\[0\]/);
    expect(failure(await c.call('read_multiple_files', { paths: Array.from({ length: 101 }, (_, i) => `/files/${i}`) })).code).toBe('INVALID_ARGUMENT');
    await expect(c.call('no_such_tool', {})).rejects.toMatchObject({ code: -32602 });
    await c.close();
  });

  it('mcp — content over the upload limit: PAYLOAD_TOO_LARGE as a tool error and nothing stored', async () => {
    const u = await stack.user();
    const c = await session(u);
    const big = failure(await c.call('write_file', { path: '/files/big.txt', content: 'x'.repeat(MAX_UPLOAD + 1) }));
    expect(big.code).toBe('PAYLOAD_TOO_LARGE');
    expect((await read(u, '/files/big.txt')).status).toBe(404);
    expect((await c.call('write_file', { path: '/files/fits.txt', content: 'x'.repeat(MAX_UPLOAD) })).isError).toBeFalsy();
    await c.close();
  });

  it('mcp — another user: their session is 404 to me, and their files do not exist for my tools', async () => {
    const a = await stack.user();
    const b = await stack.user();
    await put(stack, a, '/files/secret.txt', 'mine');
    const ca = await session(a);
    const res = await mcpPost(stack.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { authorization: `Bearer ${b.token}`, 'mcp-session-id': ca.transport.sessionId! });
    expect(res.status).toBe(404);
    expect((await body(res)).error.code).toBe(-32001);
    const cb = await session(b);
    expect(failure(await cb.call('read_text_file', { path: '/files/secret.txt' })).code).toBe('FILE_NOT_FOUND');
    await ca.close();
    await cb.close();
  });
});

describe('mcp — transport and authentication', () => {
  it('mcp — 401 without a valid token, with resource_metadata; the metadata document needs no token', async () => {
    const res = await mcpPost(stack.url, INIT, {});
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${stack.url}/.well-known/oauth-protected-resource"`);
    expect((await body(res)).error.code).toBe('UNAUTHENTICATED');
    const badToken = await mcpPost(stack.url, INIT, { authorization: 'Bearer a.b.c' });
    expect(badToken.status).toBe(401);
    expect(badToken.headers.get('www-authenticate')).toContain('resource_metadata=');
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/v1/mcp']) {
      const doc = await fetch(`${stack.url}${path}`);
      expect(doc.status).toBe(200);
      expect(await body(doc)).toMatchObject({ resource: `${stack.url}/v1/mcp`, authorization_servers: ['https://auth.example.com', 'https://login.example.com'], bearer_methods_supported: ['header'] });
    }
  });

  it('mcp — an Origin not in CORS_ORIGINS → 403 envelope; an allowed one is served and may read Mcp-Session-Id', async () => {
    const u = await stack.user();
    const evil = await mcpPost(stack.url, INIT, { authorization: `Bearer ${u.token}`, origin: 'https://evil.example' });
    expect(evil.status).toBe(403);
    expect((await body(evil)).error).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED' });
    const good = await mcpPost(stack.url, INIT, { authorization: `Bearer ${u.token}`, origin: ORIGIN });
    expect(good.status).toBe(200);
    expect(good.headers.get('mcp-session-id')).toMatch(/^[0-9a-f]{32}$/);
    expect(good.headers.get('access-control-expose-headers')).toContain('Mcp-Session-Id');
  });

  it('mcp — transport errors carry JSON-RPC bodies: unknown session 404, wrong Accept 406, malformed 400; DELETE ends a session', async () => {
    const u = await stack.user();
    const auth = { authorization: `Bearer ${u.token}` };
    const unknown = await mcpPost(stack.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { ...auth, 'mcp-session-id': 'f'.repeat(32) });
    expect(unknown.status).toBe(404);
    expect(await body(unknown)).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 } });
    const accept = await mcpPost(stack.url, INIT, { ...auth, accept: 'application/json' });
    expect(accept.status).toBe(406);
    expect((await body(accept)).jsonrpc).toBe('2.0');
    const malformed = await mcpPost(stack.url, '{"jsonrpc":', auth);
    expect(malformed.status).toBe(400);
    expect((await body(malformed)).error.code).toBe(-32700);
    const c = await session(u);
    expect((await c.call('list_projects')).isError).toBeFalsy();
    const id = c.transport.sessionId!;
    await c.transport.terminateSession();
    const after = await mcpPost(stack.url, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { ...auth, 'mcp-session-id': id });
    expect(after.status).toBe(404);
  });

  it('mcp — protocol revisions 2025-06-18 and 2025-11-25 are both negotiated', async () => {
    const u = await stack.user();
    for (const protocolVersion of ['2025-06-18', '2025-11-25']) {
      const res = await mcpPost(stack.url, { ...INIT, params: { ...INIT.params, protocolVersion } }, { authorization: `Bearer ${u.token}` });
      expect(res.status).toBe(200);
      // Answered as one JSON body, not an SSE stream (docs/api/mcp.md#transport).
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(JSON.parse(await res.text()).result.protocolVersion).toBe(protocolVersion);
    }
  });
});

describe('mcp — resources and subscriptions', () => {
  it('mcp — resources: list pages with a cursor, read text and blob, the template is listed', async () => {
    const u = await stack.user();
    const c = await session(u);
    await put(stack, u, '/files/r/a b.md', '# A');
    await put(stack, u, '/files/r/bin', Buffer.from([0xff, 0x00, 0xfe]));
    const listed = await c.client.listResources();
    const uris = listed.resources.map((r) => r.uri);
    expect(uris).toContain('workspace:///files/r/a%20b.md');
    expect(listed.resources.find((r) => r.uri === 'workspace:///files/r/a%20b.md')?.mimeType).toBe('text/markdown');
    const text = await c.client.readResource({ uri: 'workspace:///files/r/a%20b.md' });
    expect(text.contents[0]).toMatchObject({ uri: 'workspace:///files/r/a%20b.md', text: '# A', mimeType: 'text/markdown' });
    const blob = await c.client.readResource({ uri: 'workspace:///files/r/bin' });
    expect(blob.contents[0]).toMatchObject({ blob: Buffer.from([0xff, 0x00, 0xfe]).toString('base64') });
    // Text or not, the answer names the revision of the bytes it carries.
    for (const [read, path] of [[text, '/files/r/a b.md'], [blob, '/files/r/bin']] as const) {
      const newest = (await c.call('list_revisions', { path })).structuredContent.revisions[0].revision;
      expect(read.contents[0]!._meta).toMatchObject({ revision: newest });
    }
    await expect(c.client.readResource({ uri: 'workspace:///files/r/none' })).rejects.toMatchObject({ code: -32002 });
    const { resourceTemplates } = await c.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('workspace:///files/{+path}');
    await c.close();
  });

  it('mcp — subscribe to a directory: one notifications/resources/updated per change below it, none missed or repeated; nothing for changes elsewhere', async () => {
    const u = await stack.user();
    const c = await session(u);
    const seen: string[] = [];
    c.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void seen.push(n.params.uri));
    await c.client.subscribeResource({ uri: 'workspace:///files/watched' });
    const N = 25;
    for (let i = 0; i < N; i++) await put(stack, u, `/files/watched/f${i}.txt`, `v${i}`);
    await put(stack, u, '/files/elsewhere.txt', 'no');
    await expect.poll(() => seen.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(N);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(seen).toEqual(Array.from({ length: N }, (_, i) => `workspace:///files/watched/f${i}.txt`));
    await c.close();
  });
});

describe('mcp — concurrent edits', () => {
  it('mcp — 20 sessions edit 20 lines of one file at once: every edit is in the final file (a commit that lost the race reads again and reapplies)', async () => {
    const u = await stack.user();
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i}`);
    await put(stack, u, '/files/shared.txt', `${lines.join('\n')}\n`);
    const agents = await Promise.all(lines.map(() => session(u)));
    const answers = await Promise.all(agents.map((c, k) => c.call('edit_file', { path: '/files/shared.txt', edits: [{ oldText: `line ${k}\n`, newText: `LINE ${k}\n` }] })));
    const final = (await read(u, '/files/shared.txt')).body.content as string;
    // An edit either is in the file, or its call failed with a precondition error and changed nothing: never lost.
    answers.forEach((answer, k) => {
      if (answer.isError) expect(answer.structuredContent.error.code).toBe('PRECONDITION_FAILED');
      expect(final.includes(`LINE ${k}\n`), `edit ${k}: ${JSON.stringify(answer.structuredContent)}`).toBe(!answer.isError);
    });
    const applied = answers.filter((a) => !a.isError).length;
    expect(applied).toBeGreaterThan(0);
    expect(final.split('\n').filter((l) => l.startsWith('LINE ')).length).toBe(applied);
    await Promise.all(agents.map((c) => c.close()));
  });
});

// Last: it restarts the stack's gateway.
describe('mcp — sessions across replicas', () => {
  it('mcp — a session opened on one replica is served by another, and survives the restart of the replica that opened it', async () => {
    const u = await stack.user();
    const c = await session(u);
    const id = c.transport.sessionId!;
    expect((await c.call('write_file', { path: '/files/s.txt', content: 's' })).isError).toBeFalsy();
    // The client goes quiet (its stream too); the session stays in Redis.
    await c.transport.close();
    const other = await stack.extraGateway({});
    try {
      const there = await mcpConnect(other.url, u, { sessionId: id });
      expect((await there.call('read_text_file', { path: '/files/s.txt' })).structuredContent.content).toBe('s');
      await there.transport.close();
    } finally {
      await other.stop();
    }
    stack.services.gateway = await restartService(stack.services.gateway!);
    const again = await mcpConnect(stack.url, u, { sessionId: id });
    expect((await again.call('read_text_file', { path: '/files/s.txt' })).structuredContent.content).toBe('s');
    await again.close();
  }, 240_000);

  it('mcp — the replica holding the GET stream is killed: the stream reopened on another replica goes on where it stopped, no notification missed or repeated', async () => {
    const u = await stack.user();
    const c = await session(u);
    const id = c.transport.sessionId!;
    const seen: string[] = [];
    c.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void seen.push(n.params.uri));
    await c.client.subscribeResource({ uri: 'workspace:///files/w' });
    const uri = (i: number) => `workspace:///files/w/f${i}.txt`;
    const other = await stack.extraGateway({});
    const viaOther = { ...stack, url: other.url };
    try {
      // Committed through the other replica, notified on the stream the first one holds.
      for (let i = 0; i < 5; i++) await put(viaOther, u, `/files/w/f${i}.txt`, `v${i}`);
      await expect.poll(() => seen.length, { timeout: 30_000 }).toBe(5);
      expect(seen).toEqual([0, 1, 2, 3, 4].map(uri));
      await new Promise((r) => setTimeout(r, 1_000));
      await killProcesses(stack, ['gateway']);
      // Changes while no stream is open wait in the session's position, not in a gateway.
      for (let i = 5; i < 10; i++) await put(viaOther, u, `/files/w/f${i}.txt`, `v${i}`);
      const stream = await openStream(other.url, u.token, id);
      try {
        await put(viaOther, u, '/files/w/f10.txt', 'v10');
        await expect.poll(() => stream.updates.length, { timeout: 30_000 }).toBe(6);
        await new Promise((r) => setTimeout(r, 1_000));
        expect(stream.updates).toEqual([5, 6, 7, 8, 9, 10].map(uri));
        expect(seen).toHaveLength(5);
      } finally {
        stream.close();
      }
    } finally {
      await c.close().catch(() => undefined);
      await other.stop();
      await reviveProcesses(stack, ['gateway']);
    }
  }, 240_000);
});

/** The session's GET stream opened by hand (as a client reconnecting to another replica does): the URIs it is told of, in order. */
async function openStream(baseUrl: string, token: string, sessionId: string): Promise<{ updates: string[]; close(): void }> {
  const abort = new AbortController();
  const res = await fetch(`${baseUrl}/v1/mcp`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': sessionId }, signal: abort.signal });
  expect(res.status).toBe(200);
  const updates: string[] = [];
  void (async () => {
    let buffered = '';
    for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        // The stream's first event carries only an id (empty data).
        if (!line.startsWith('data: ') || line === 'data: ') continue;
        const message = JSON.parse(line.slice(6)) as { method?: string; params?: { uri?: string } };
        if (message.method === 'notifications/resources/updated') updates.push(message.params!.uri!);
      }
    }
  })().catch(() => undefined);
  return { updates, close: () => abort.abort() };
}
