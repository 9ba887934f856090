import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { put, read } from './support/files-api.js';
import { mcpConnect, mcpPost, type ToolAnswer } from './support/mcp.js';
import { sharedStack, type SharedStack } from './support/stack.js';

/**
 * Prompts made for the MCP reference filesystem server (@modelcontextprotocol/server-filesystem)
 * work here unchanged (docs/api/mcp.md#tools): its tools with its arguments, its
 * list_allowed_directories and read_file, paths relative to the root, a tools/list small enough
 * for every session to pay for, and answers an agent can act on.
 */
const MAX_TOOLS_LIST_BYTES = 16_384;
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

let stack: SharedStack;
let reference: Tool[];
let ours: Tool[];
beforeAll(async () => {
  stack = sharedStack();
  reference = await referenceTools();
  const c = await mcpConnect(stack.url, await stack.user());
  ours = (await c.client.listTools()).tools;
  await c.close();
});

/** The reference server's tools/list, over stdio as a desktop client starts it, on an empty temp dir. */
async function referenceTools(): Promise<Tool[]> {
  const root = mkdtempSync(join(tmpdir(), 'mcp-reference-'));
  const entry = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  try {
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [entry, root], stderr: 'ignore' }));
    return (await client.listTools()).tools;
  } finally {
    await client.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const byName = (tools: Tool[], name: string) => tools.find((t) => t.name === name);

function failure(answer: ToolAnswer) {
  expect(answer.isError, JSON.stringify(answer)).toBe(true);
  return answer.structuredContent.error as { code: string; message: string; details?: Record<string, unknown> };
}

function succeeded(answer: ToolAnswer) {
  expect(answer.isError, JSON.stringify(answer)).toBeFalsy();
  return answer.structuredContent;
}

describe('mcp reference — the tools of @modelcontextprotocol/server-filesystem', () => {
  it('reference — every tool it offers is offered here, requiring the same arguments and taking every argument it takes', () => {
    expect(reference.length).toBeGreaterThanOrEqual(14);
    for (const ref of reference) {
      const mine = byName(ours, ref.name);
      expect(mine, ref.name).toBeDefined();
      expect([...(mine!.inputSchema.required ?? [])].sort(), ref.name).toEqual([...(ref.inputSchema.required ?? [])].sort());
      // Ours refuse arguments they do not name: each of the reference's must be one of ours.
      expect(Object.keys(mine!.inputSchema.properties ?? {}), ref.name).toEqual(expect.arrayContaining(Object.keys(ref.inputSchema.properties ?? {})));
    }
  });

  it('reference — each shared tool\'s annotations say what the reference\'s say (where it says anything)', () => {
    for (const ref of reference) {
      const mine = byName(ours, ref.name)!.annotations!;
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        if (ref.annotations?.[hint] !== undefined) expect(mine[hint], `${ref.name} ${hint}`).toBe(ref.annotations[hint]);
      }
    }
    expect(byName(ours, 'move_file')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
  });

  it(`reference — tools/list takes at most ${MAX_TOOLS_LIST_BYTES} bytes as JSON, with every tool still in it`, () => {
    const size = JSON.stringify(ours).length;
    expect(size).toBeLessThanOrEqual(MAX_TOOLS_LIST_BYTES);
    expect(ours.length).toBeGreaterThanOrEqual(22);
    for (const t of ours) expect([t.name, t.inputSchema.type, t.outputSchema?.type]).toEqual([t.name, 'object', 'object']);
  });
});

describe('mcp reference — list_allowed_directories and read_file', () => {
  it('reference — list_allowed_directories answers /files as the reference words it; read_file is read_text_file under its deprecated name', async () => {
    const u = await stack.user();
    const c = await mcpConnect(stack.url, u);
    const dirs = await c.call('list_allowed_directories');
    expect(succeeded(dirs)).toEqual({ directories: ['/files'] });
    expect(dirs.content).toEqual([{ type: 'text', text: 'Allowed directories:\n/files' }]);
    await put(stack, u, '/files/r/a.md', 'one\ntwo\nthree\n');
    for (const args of [{ path: '/files/r/a.md' }, { path: '/files/r/a.md', head: 2 }, { path: '/files/r/a.md', tail: 1 }]) {
      expect(await c.call('read_file', args), JSON.stringify(args)).toEqual(await c.call('read_text_file', args));
    }
    expect(succeeded(await c.call('read_file', { path: '/files/r/a.md', head: 2 })).content).toBe('one\ntwo');
    const listed = byName(ours, 'read_file')!;
    expect(listed.description).toMatch(/^Deprecated alias of read_text_file/);
    expect(listed.inputSchema).toEqual(byName(ours, 'read_text_file')!.inputSchema);
    await c.close();
  });
});

describe('mcp reference — relative paths', () => {
  it('reference — a relative path in any tool is taken relative to /files (`.` is /files); `..` is still INVALID_PATH', async () => {
    const u = await stack.user();
    const c = await mcpConnect(stack.url, u);
    expect(succeeded(await c.call('write_file', { path: 'notes/a.md', content: 'alpha\n' })).path).toBe('/files/notes/a.md');
    expect((await read(u, '/files/notes/a.md')).body.content).toBe('alpha\n');
    expect(succeeded(await c.call('read_text_file', { path: './notes/a.md' })).content).toBe('alpha\n');
    expect(succeeded(await c.call('edit_file', { path: 'notes/a.md', edits: [{ oldText: 'alpha', newText: 'beta' }] })).path).toBe('/files/notes/a.md');
    const listed = succeeded(await c.call('list_directory', { path: '.' }));
    expect(listed.path).toBe('/files');
    expect(listed.entries.map((e: { path: string }) => e.path)).toContain('/files/notes');
    const many = succeeded(await c.call('read_multiple_files', { paths: ['notes/a.md', '/files/notes/a.md'] }));
    expect(many.files.map((f: { path: string; content: string }) => [f.path, f.content])).toEqual([['/files/notes/a.md', 'beta\n'], ['/files/notes/a.md', 'beta\n']]);
    expect(succeeded(await c.call('copy_file', { source: 'notes/a.md', destination: 'notes/b.md' }))).toMatchObject({ from: '/files/notes/a.md', path: '/files/notes/b.md' });
    expect(succeeded(await c.call('move_file', { source: 'notes/b.md', destination: 'moved/b.md' })).path).toBe('/files/moved/b.md');
    expect(succeeded(await c.call('search_files', { path: '.', pattern: '**/*.md', excludePatterns: ['projects'] })).matches).toEqual(['/files/moved/b.md', '/files/notes/a.md']);
    expect(succeeded(await c.call('grep', { path: 'notes', pattern: 'beta' })).matches.map((m: { path: string }) => m.path)).toEqual(['/files/notes/a.md']);
    expect(succeeded(await c.call('get_file_info', { path: 'moved' }))).toMatchObject({ path: '/files/moved', type: 'directory' });
    expect(succeeded(await c.call('create_directory', { path: 'made/deep' })).path).toBe('/files/made/deep');
    expect(succeeded(await c.call('delete_file', { path: 'moved/b.md' })).path).toBe('/files/moved/b.md');
    for (const path of ['..', '../etc/passwd', 'notes/../../x', 'notes/./a.md']) {
      expect(failure(await c.call('read_text_file', { path })).code, path).toBe('INVALID_PATH');
      expect(failure(await c.call('write_file', { path, content: 'x' })).code, path).toBe('INVALID_PATH');
    }
    expect(failure(await c.call('write_file', { path: '', content: 'x' }))).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'path' } });
    await c.close();
  });
});

describe('mcp reference — answers an agent can act on', () => {
  it('reference — [initialize], a batch of one, is 400 (-32600) as every initialize in a batch, and opens no session', async () => {
    const u = await stack.user();
    const res = await mcpPost(stack.url, [INIT], { authorization: `Bearer ${u.token}` });
    expect(res.status).toBe(400);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 }, id: null });
  });

  it('reference — write_file onto a folder is PATH_CONFLICT, worded for a write (it has no file part)', async () => {
    const u = await stack.user();
    const c = await mcpConnect(stack.url, u);
    await put(stack, u, '/files/dir/x.txt', 'x');
    for (const path of ['/files/dir', 'dir', '.']) {
      const refused = failure(await c.call('write_file', { path, content: 'y' }));
      expect(refused.code, path).toBe('PATH_CONFLICT');
      expect(refused.message, path).toMatch(/^a directory exists at this path, and a file cannot replace it: \/files/);
      expect(refused.message).not.toMatch(/file part|filename/);
    }
    expect((await read(u, '/files/dir/x.txt')).body.content).toBe('x');
    await c.close();
  });

  it('reference — move_file and copy_file onto a file: FILE_EXISTS says what to do with these tools\' arguments (they take no onConflict)', async () => {
    const u = await stack.user();
    const c = await mcpConnect(stack.url, u);
    await put(stack, u, '/files/m/a.txt', 'A');
    await put(stack, u, '/files/m/taken.txt', 'T');
    for (const tool of ['move_file', 'copy_file']) {
      const refused = failure(await c.call(tool, { source: '/files/m/a.txt', destination: '/files/m/taken.txt' }));
      expect(refused).toMatchObject({ code: 'FILE_EXISTS', details: { path: '/files/m/taken.txt' } });
      expect(refused.message).toBe('a file already exists at /files/m/taken.txt; delete or move it first, or choose another destination');
      // The advice it gave before named an argument these tools refuse.
      expect(failure(await c.call(tool, { source: '/files/m/a.txt', destination: '/files/m/taken.txt', onConflict: 'overwrite' })).code).toBe('INVALID_ARGUMENT');
    }
    // Doing as it says works.
    succeeded(await c.call('delete_file', { path: '/files/m/taken.txt' }));
    succeeded(await c.call('move_file', { source: '/files/m/a.txt', destination: '/files/m/taken.txt' }));
    expect((await read(u, '/files/m/taken.txt')).body.content).toBe('A');
    await c.close();
  });
});
