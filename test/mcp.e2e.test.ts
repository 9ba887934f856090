import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { put, read, sha256 } from './support/files-api.js';
import { mcpConnect, mcpPost } from './support/mcp.js';
import { startStack, type Stack } from './support/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ filesEnv: { MAX_UPLOAD_BYTES: String(1024 * 1024) }, gatewayEnv: { CORS_ORIGINS: 'https://app.example.com' } });
});
afterAll(async () => {
  await stack?.stop();
});

describe('mcp — tools', () => {
  it('mcp — smoke: initialize, list tools, write and read back', async () => {
    const u = await stack.user();
    const c = await mcpConnect(stack.url, u);
    const { tools } = await c.client.listTools();
    expect(tools.map((t) => t.name)).toContain('read_text_file');
    const w = await c.call('write_file', { path: '/files/a.md', content: '# hi\n' });
    expect(w.isError, JSON.stringify(w)).toBeFalsy();
    expect(w.structuredContent).toMatchObject({ path: '/files/a.md', sha256: sha256('# hi\n'), size: 5, mimeType: 'text/markdown' });
    expect(w.structuredContent.revision).toMatch(/^rev_[0-9a-f]{32}$/);
    const r = await c.call('read_text_file', { path: '/files/a.md' });
    expect(r.structuredContent).toMatchObject({ content: '# hi\n', sha256: sha256('# hi\n'), revision: w.structuredContent.revision });
    expect((await read(u, '/files/a.md')).body.content).toBe('# hi\n');
    await c.close();
  });
});
