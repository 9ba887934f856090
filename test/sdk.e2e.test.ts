import { createWorkspaceClient, multipart, type components, type operations, type WorkspaceClient } from '@workspace/sdk';
import { beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { sharedStack, type SharedStack } from './support/stack.js';

/**
 * The typed SDK (packages/sdk, generated from the OpenAPI document) against the real stack:
 * everything here typechecks without a cast, so the document is good enough for a generated client.
 */

type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;
type Headers<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['header']>;
type Schemas = components['schemas'];

/** The data of a success, or a failed test naming the status and the error envelope. */
function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) throw new Error(`${result.response.status}: ${JSON.stringify(result.error)}`);
  return result.data;
}

let stack: SharedStack;
let client: WorkspaceClient;

beforeAll(async () => {
  stack = sharedStack();
  client = createWorkspaceClient({ baseUrl: `${stack.url}/`, token: await stack.token() });
});

describe('sdk — generated types', () => {
  it('sdk — query integers are numbers, booleans are booleans, and the headers routes read are parameters', () => {
    expectTypeOf<Query<'listAgents'>['page']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<Query<'listAgents'>['limit']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<Query<'listFiles'>['limit']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<Query<'listFiles'>['recursive']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<Query<'deleteFile'>['permanent']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<Query<'listProjects'>['includeArchived']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<Query<'getChanges'>['timeout']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<Headers<'updateAgent'>['If-Match']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Headers<'downloadFile'>>().toHaveProperty('Range');
    expectTypeOf<Headers<'downloadFile'>>().toHaveProperty('If-None-Match');
    expectTypeOf<Headers<'createAgent'>>().toHaveProperty('Idempotency-Key');
    expectTypeOf<Headers<'fireTrigger'>['X-Signature']>().toEqualTypeOf<string>();
    expectTypeOf<operations['uploadFile']['requestBody']['content']['multipart/form-data']['file']>().toEqualTypeOf<Blob>();
  });
});

describe('sdk — against the stack', () => {
  it('sdk — creates a project, uploads a file, creates and PATCHes an Agent (If-Match), lists its versions', async () => {
    const name = `SDK ${Date.now().toString(36)}`;
    const project = ok(await client.POST('/v1/agent/projects', { body: { name, goal: 'typed clients' } }));
    expectTypeOf(project).toEqualTypeOf<Schemas['Project']>();
    expect(project).toMatchObject({ name, goal: 'typed clients', archived: false });

    const path = `/files/projects/${name}/notes.md`;
    const file = new File(['hello'], 'notes.md', { type: 'text/markdown' });
    const uploaded = ok(await client.POST('/v1/agent/files/upload', { body: { path, file }, bodySerializer: multipart }));
    expect(uploaded).toEqual({ success: true, path, size: 5, mimeType: 'text/markdown', sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824' });

    const created = await client.POST('/v1/agents', { body: { name: 'SDK agent', projectName: name, knowledgeFiles: [{ path }] } });
    const agent = ok(created);
    expect(created.response.status).toBe(201);
    expect(created.response.headers.get('etag')).toBe(`"${agent.currentConfigId}"`);
    expect(agent.config).toMatchObject({ name: 'SDK agent', projectName: name, knowledgeFiles: [{ path, size: 5 }] });

    const agentId = agent.agentId;
    const patched = ok(
      await client.PATCH('/v1/agents/{agentId}', {
        params: { path: { agentId }, header: { 'If-Match': `"${agent.currentConfigId}"` } },
        body: { instructions: 'Answer in one line.' },
      }),
    );
    expect(patched.currentConfigId).not.toBe(agent.currentConfigId);
    expect(patched.config.instructions).toBe('Answer in one line.');

    // The old tag is stale now: 412 with the contract's envelope, typed as the error.
    const stale = await client.PATCH('/v1/agents/{agentId}', { params: { path: { agentId }, header: { 'If-Match': `"${agent.currentConfigId}"` } }, body: { goal: 'late' } });
    expect(stale.response.status).toBe(412);
    expect(stale.error?.error).toMatchObject({ code: 'STALE_AGENT_CONFIG', details: { currentConfigId: patched.currentConfigId } });
    // `details` is typed by `code`: narrowed on it, the current config id needs no cast.
    const failure = stale.error!.error;
    if (failure.code !== 'STALE_AGENT_CONFIG') throw new Error(`unexpected ${failure.code}`);
    expectTypeOf(failure.details).toEqualTypeOf<{ currentConfigId: string } | undefined>();
    const current: string = failure.details!.currentConfigId;
    expect(current).toBe(patched.currentConfigId);

    const { versions } = ok(await client.GET('/v1/agents/{agentId}/versions', { params: { path: { agentId } } }));
    expect(versions.map((v) => v.configId)).toEqual([patched.currentConfigId, agent.currentConfigId]);
  });

  it('sdk — typed query values travel as text: page, limit and booleans are accepted, and a bad one is a typed 400', async () => {
    ok(await client.POST('/v1/agents', { body: { name: 'listed' } }));
    const page = ok(await client.GET('/v1/agents', { params: { query: { page: 1, limit: 1 } } }));
    expect(page.pagination).toMatchObject({ page: 1, limit: 1 });
    expect(page.agents).toHaveLength(1);

    const listing = ok(await client.GET('/v1/agent/files', { params: { query: { path: '/files/projects', recursive: true, includeStats: false, limit: 1000 } } }));
    expect(listing).toMatchObject({ recursive: true, hasMore: false });
    expect(listing.entries.every((e) => e.size === undefined)).toBe(true);

    const refused = await client.GET('/v1/agents', { params: { query: { limit: 101 } } });
    expect(refused.response.status).toBe(400);
    expect(refused.error?.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'limit' } });
  });

  it('sdk — a download with a declared Range header answers 206 with those bytes', async () => {
    const path = '/files/sdk-range.txt';
    ok(await client.POST('/v1/agent/files/upload', { body: { path, file: new Blob(['hello world']) }, bodySerializer: multipart }));
    const part = await client.GET('/v1/agent/files/download', { params: { query: { path }, header: { Range: 'bytes=6-10' } }, parseAs: 'text' });
    expect(part.response.status).toBe(206);
    expect(part.data).toBe('world');
  });
});
