import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHeaderProxy, type HeaderProxy } from './support/header-proxy.js';
import { conformanceNode, passed, runConformance, type ConformanceRun } from './support/mcp-conformance.js';
import { body, mcpPost } from './support/mcp.js';
import { sharedStack, type ApiUser, type SharedStack } from './support/stack.js';

/**
 * The MCP server driven by official clients that are not ours: the MCP Inspector's command line
 * (@modelcontextprotocol/inspector-cli, the `--cli` mode of `npx @modelcontextprotocol/inspector`)
 * over Streamable HTTP, with the Bearer token as a header, as a user would run it by hand
 * (docs/api/mcp.md#connecting-a-client); and the official conformance suite
 * (@modelcontextprotocol/conformance), whose server scenarios that apply to this server must pass.
 */
let stack: SharedStack;
beforeAll(() => {
  stack = sharedStack();
});

/** The tool names of the table under "## Tools" in docs/api/mcp.md, in its order. */
function documentedTools(): string[] {
  const doc = readFileSync(new URL('../docs/api/mcp.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('\n## Tools\n'), doc.indexOf('\n## ', doc.indexOf('\n## Tools\n') + 1));
  return [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]!);
}

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
  it('inspector — tools/list names exactly the tools of the table in docs/api/mcp.md, in its order, each with an input schema', async () => {
    const listed = await inspector((await stack.user()).token, ['--method', 'tools/list']);
    expect(listed.code, listed.stderr).toBe(0);
    const tools = listed.json.tools as { name: string; inputSchema: { type: string } }[];
    const documented = documentedTools();
    expect(documented.length).toBeGreaterThanOrEqual(20);
    expect(tools.map((t) => t.name)).toEqual(documented);
    for (const t of tools) expect(t.inputSchema.type, t.name).toBe('object');
  });

  it('inspector — a bad argument (wrong type, unknown name, bad path) is an isError result with INVALID_ARGUMENT or INVALID_PATH, not a protocol failure', async () => {
    const u = await stack.user();
    const cases: [Record<string, unknown>, string, string | undefined][] = [
      [{ path: '/files/a.md', head: 'three' }, 'INVALID_ARGUMENT', 'head'],
      [{ path: '/files/a.md', colour: 'red' }, 'INVALID_ARGUMENT', undefined],
      [{ path: '/files/../etc/passwd' }, 'INVALID_PATH', undefined],
    ];
    for (const [args, code, field] of cases) {
      const answer = await call(u, 'read_text_file', args);
      expect(answer.code, answer.stderr).toBe(0);
      expect(answer.json.isError, JSON.stringify(args)).toBe(true);
      expect(answer.json.structuredContent.error.code, JSON.stringify(args)).toBe(code);
      if (field) expect(answer.json.structuredContent.error.details.field).toBe(field);
      expect(JSON.stringify(answer.json.content)).toContain(code);
    }
  });

  it('inspector — write_file, read_text_file and edit_file round-trip; a missing file is an isError result (FILE_NOT_FOUND)', async () => {
    const u = await stack.user();
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

  it('inspector — without a token it cannot connect: it reports the 401 (UNAUTHENTICATED), whose challenge points at the protected-resource metadata', async () => {
    const refused = await inspector(null, ['--method', 'tools/list']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('UNAUTHENTICATED');
    // What the Inspector was answered: the challenge it would follow to find an authorization server.
    const res = await mcpPost(stack.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }, {});
    expect(res.status).toBe(401);
    expect((await body(res)).error.code).toBe('UNAUTHENTICATED');
    const metadataUrl = /^Bearer resource_metadata="([^"]+)"$/.exec(res.headers.get('www-authenticate') ?? '')?.[1];
    expect(metadataUrl, res.headers.get('www-authenticate') ?? 'no WWW-Authenticate').toBe(`${stack.url}/.well-known/oauth-protected-resource`);
    const metadata = await fetch(metadataUrl!);
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toMatchObject({ resource: `${stack.url}/v1/mcp`, bearer_methods_supported: ['header'] });
  });
});

/**
 * The conformance suite's server scenarios that cannot pass here, and why: they call the tools,
 * resources, prompts and completions of the suite's own test server ("everything" server), which
 * a workspace server does not have. Each must fail, and for that reason (the pattern beside it,
 * matched against its failed checks): a failure for another reason is a defect. Listed in docs/testing.md.
 */
const TEST_TOOL = /unknown tool: test_/;
const NOT_WORKSPACE_URI = /not a workspace resource/;
const NO_METHOD = /-32601: Method not found/;
const NOT_APPLICABLE: Record<string, RegExp> = {
  'completion-complete': NO_METHOD,
  'tools-call-simple-text': TEST_TOOL,
  'tools-call-image': TEST_TOOL,
  'tools-call-audio': TEST_TOOL,
  'tools-call-embedded-resource': TEST_TOOL,
  'tools-call-mixed-content': TEST_TOOL,
  'tools-call-with-logging': TEST_TOOL,
  'tools-call-error': TEST_TOOL,
  'tools-call-with-progress': TEST_TOOL,
  'tools-call-sampling': TEST_TOOL,
  'tools-call-elicitation': TEST_TOOL,
  'elicitation-sep1034-defaults': TEST_TOOL,
  'elicitation-sep1330-enums': TEST_TOOL,
  'resources-read-text': NOT_WORKSPACE_URI,
  'resources-read-binary': NOT_WORKSPACE_URI,
  'resources-templates-read': NOT_WORKSPACE_URI,
  'resources-subscribe': NOT_WORKSPACE_URI,
  'resources-unsubscribe': NOT_WORKSPACE_URI,
  'prompts-list': NO_METHOD,
  'prompts-get-simple': NO_METHOD,
  'prompts-get-with-args': NO_METHOD,
  'prompts-get-embedded-resource': NO_METHOD,
  'prompts-get-with-image': NO_METHOD,
};
/** The scenarios about the protocol itself, which any server must pass. */
const APPLIES = ['server-initialize', 'ping', 'logging-set-level', 'tools-list', 'resources-list', 'server-sse-multiple-streams', 'dns-rebinding-protection'];

describe('mcp — the official conformance suite (@modelcontextprotocol/conformance)', () => {
  let node: Awaited<ReturnType<typeof conformanceNode>>;
  let proxy: HeaderProxy | undefined;
  let gateway: Awaited<ReturnType<SharedStack['extraGateway']>> | undefined;
  let run: ConformanceRun | undefined;

  beforeAll(async () => {
    node = await conformanceNode();
    if (!('node' in node)) {
      console.warn(`mcp conformance: skipped: ${node.missing}`);
      return;
    }
    // The CLI sends no Authorization header: a proxy on loopback adds the token. Its origin is
    // the one allowed, so that dns-rebinding-protection's local Origin passes and a foreign one
    // (evil.example.com) is refused.
    proxy = await startHeaderProxy();
    gateway = await stack.extraGateway({ CORS_ORIGINS: proxy.url });
    proxy.forward(gateway.url, { authorization: `Bearer ${await stack.token()}` });
    run = await runConformance({ node: node.node, url: `${proxy.url}/v1/mcp`, expectedFailures: Object.keys(NOT_APPLICABLE) });
  });
  afterAll(async () => {
    await gateway?.stop();
    await proxy?.close();
  });

  it('conformance — the suite ran exactly the scenarios listed here, and judges the run as expected (exit 0 with these expected failures)', (ctx) => {
    if (!run) return ctx.skip('missing' in node ? node.missing : 'no run');
    expect([...run.scenarios.keys()].sort()).toEqual([...APPLIES, ...Object.keys(NOT_APPLICABLE)].sort());
    expect(run.code, run.output).toBe(0);
  });

  for (const scenario of APPLIES) {
    it(`conformance — ${scenario} passes every check`, (ctx) => {
      if (!run) return ctx.skip('missing' in node ? node.missing : 'no run');
      const checks = run.scenarios.get(scenario);
      expect(checks, `${scenario} did not run`).toBeDefined();
      const failed = checks!.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
      expect(failed.map((c) => `${c.id}: ${c.errorMessage}`), scenario).toEqual([]);
      expect(passed(checks!), scenario).toBe(true);
    });
  }

  it('conformance — the scenarios that need the suite\'s own test tools, test:// resources, prompts or completions fail, each for that reason', (ctx) => {
    if (!run) return ctx.skip('missing' in node ? node.missing : 'no run');
    for (const [scenario, failsWith] of Object.entries(NOT_APPLICABLE)) {
      const checks = run.scenarios.get(scenario) ?? [];
      expect(passed(checks), `${scenario} passed: move it to APPLIES`).toBe(false);
      const failures = checks.filter((c) => c.status === 'FAILURE').map((c) => c.errorMessage ?? '');
      expect(failures.length, scenario).toBeGreaterThan(0);
      for (const message of failures) expect(message, scenario).toMatch(failsWith);
    }
  });

  it('conformance — docs/testing.md names every scenario that runs and every one that does not apply', () => {
    const doc = readFileSync(new URL('../docs/testing.md', import.meta.url), 'utf8');
    expect([...APPLIES, ...Object.keys(NOT_APPLICABLE)].filter((scenario) => !doc.includes(`\`${scenario}\``))).toEqual([]);
  });
});
