import { execFile } from 'node:child_process';
import { dirname } from 'node:path';
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedStack, type ApiUser, type SharedStack } from './support/stack.js';

/**
 * The MCP server driven by an official client that is not ours: the MCP Inspector's command line
 * (@modelcontextprotocol/inspector-cli, the `--cli` mode of `npx @modelcontextprotocol/inspector`)
 * over Streamable HTTP, with the Bearer token as a header, as a user would run it by hand
 * (docs/api/mcp.md#connecting-a-client).
 */
let stack: SharedStack;
beforeAll(() => {
  stack = sharedStack();
});

const CLI = createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/build/index.js');

interface Run {
  code: number;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- what the CLI prints, checked field by field below
  stderr: string;
}

/** Runs the Inspector CLI against the stack's /v1/mcp; `token` null sends no Authorization. */
function inspector(token: string | null, args: string[]): Promise<Run> {
  const headers = token === null ? [] : ['--header', `Authorization: Bearer ${token}`];
  return new Promise((resolve) => {
    // It reads its own package.json by a path relative to the working directory: run it from its build/.
    execFile(process.execPath, [CLI, `${stack.url}/v1/mcp`, '--transport', 'http', ...headers, ...args], { cwd: dirname(CLI), timeout: 30_000 }, (err, stdout, stderr) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, json, stderr });
    });
  });
}

const call = (u: ApiUser, tool: string, args: Record<string, unknown>) =>
  inspector(u.token, ['--method', 'tools/call', '--tool-name', tool, ...Object.entries(args).flatMap(([k, v]) => ['--tool-arg', `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`])]);

describe('mcp — the MCP Inspector CLI', () => {
  it('inspector — tools/list names every tool with an input schema; write_file, read_text_file and edit_file round-trip; a bad argument is an isError result', async () => {
    const u = await stack.user();
    const listed = await inspector(u.token, ['--method', 'tools/list']);
    expect(listed.code, listed.stderr).toBe(0);
    const tools = listed.json.tools as { name: string; inputSchema: { type: string } }[];
    for (const name of ['read_text_file', 'write_file', 'edit_file', 'list_directory', 'move_file', 'grep', 'create_checkpoint', 'rewind']) {
      expect(tools.find((t) => t.name === name)?.inputSchema.type, name).toBe('object');
    }

    const written = await call(u, 'write_file', { path: '/files/inspector/a.md', content: 'one\ntwo\n' });
    expect(written.code, written.stderr).toBe(0);
    expect(written.json.isError ?? false).toBe(false);
    expect(written.json.structuredContent).toMatchObject({ path: '/files/inspector/a.md', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });

    const edited = await call(u, 'edit_file', { path: '/files/inspector/a.md', edits: [{ oldText: 'two', newText: 'zwei' }] });
    expect(edited.code, edited.stderr).toBe(0);
    expect(edited.json.structuredContent.diff).toContain('-two');
    expect(edited.json.structuredContent.diff).toContain('+zwei');

    const read = await call(u, 'read_text_file', { path: '/files/inspector/a.md' });
    expect(read.json.structuredContent.content).toBe('one\nzwei\n');
    // HTTP sees the same bytes.
    expect((await u.request('GET', '/v1/agent/files/read?path=/files/inspector/a.md')).body.content).toBe('one\nzwei\n');

    const missing = await call(u, 'read_text_file', { path: '/files/inspector/nope.md' });
    expect(missing.code).toBe(0);
    expect(missing.json.isError).toBe(true);
    expect(JSON.stringify(missing.json.content)).toContain('FILE_NOT_FOUND');
  });

  it('inspector — resources/list and resources/read of a workspace:/// URI', async () => {
    const u = await stack.user();
    expect((await call(u, 'write_file', { path: '/files/res/b.txt', content: 'bee' })).code).toBe(0);
    const listed = await inspector(u.token, ['--method', 'resources/list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect((listed.json.resources as { uri: string }[]).map((r) => r.uri)).toContain('workspace:///files/res/b.txt');
    const read = await inspector(u.token, ['--method', 'resources/read', '--uri', 'workspace:///files/res/b.txt']);
    expect(read.code, read.stderr).toBe(0);
    expect(read.json.contents[0]).toMatchObject({ uri: 'workspace:///files/res/b.txt', text: 'bee' });
  });

  it('inspector — without a token it cannot connect: it reports the 401 (UNAUTHENTICATED)', async () => {
    const refused = await inspector(null, ['--method', 'tools/list']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('UNAUTHENTICATED');
  });
});
