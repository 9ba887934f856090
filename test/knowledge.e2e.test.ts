import { createHash, randomBytes } from 'node:crypto';
import { Client as S3Client } from 'minio';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readEvents, type RedisClient, tenantKey } from '@workspace/platform';
import { restartService } from '@workspace/testkit';
import { upload } from './support/files.js';
import { startStack, type ApiUser, type Stack } from './support/stack.js';
import { testNats, testRedis } from './support/backends.js';

let stack: Stack;
let s3: S3Client;
let bucket: string;
let redis: RedisClient;
beforeAll(async () => {
  redis = testRedis('knowledge-test');
  stack = await startStack();
  const { endpoint, accessKey, secretKey, region } = inject('infra').s3;
  const url = new URL(endpoint);
  s3 = new S3Client({ endPoint: url.hostname, port: Number(url.port), useSSL: url.protocol === 'https:', accessKey, secretKey, region, pathStyle: true });
  bucket = stack.services.files!.env.S3_BUCKET!;
});
afterAll(async () => {
  await stack?.stop();
  await redis?.quit();
});

const FIVE_SECONDS = { timeout: 5_000, interval: 100 };
const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

/** RFC 8785 for the JSON a config holds (strings, integers, booleans, null): sorted keys, ECMAScript serialization. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** docs/api/agents.md#content-digest: SHA-256 of the canonical JSON of schemaVersion and the editable fields as stored. */
function digestOf(config: Record<string, unknown>): string {
  const { configId: _c, agentId: _a, createdAt: _t, contentDigest: _d, normalizedName: _n, changeNote: _note, parentConfigId: _p, ...content } = config;
  return sha256(canonical(content));
}

/**
 * The knowledge an Agent pins, as the files service's index records it (sha256 → object key),
 * with the bytes read from the bucket: sha256 → bytes.
 */
async function copiesOf(u: ApiUser, agentId: string): Promise<Map<string, Buffer>> {
  const pins = await redis.hgetall(`{u:${tenantKey(u.sub)}}:fs:${bucket}:kn:${agentId}`);
  const out = new Map<string, Buffer>();
  for (const [sha, key] of Object.entries(pins)) {
    const chunks: Buffer[] = [];
    for await (const chunk of await s3.getObject(bucket, key)) chunks.push(chunk as Buffer);
    out.set(sha, Buffer.concat(chunks));
  }
  return out;
}

async function put(u: ApiUser, path: string, content: string | Buffer) {
  const res = await upload(stack.url, u, { filename: 'x', content }, { path, onConflict: 'overwrite' });
  expect(res.status, res.text).toBe(200);
}

async function createAgent(u: ApiUser, body: Record<string, unknown>) {
  const res = await u.request('POST', '/v1/agents', body);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe('knowledge files', () => {
  it('knowledge — an Agent created with knowledgeFiles stores path, size, sha256 and mimeType; the digest covers them', async () => {
    const u = await stack.user();
    const data = randomBytes(3000);
    await put(u, '/files/docs/guide.md', '# Guide\n');
    await put(u, '/files/data.bin', data);
    const agent = await createAgent(u, { name: 'Reader', knowledgeFiles: [{ path: '/files/docs/guide.md' }, { path: '/files/data.bin/' }] });
    expect(agent.config.knowledgeFiles).toEqual([
      { path: '/files/docs/guide.md', size: 8, sha256: sha256('# Guide\n'), mimeType: 'text/markdown' },
      { path: '/files/data.bin', size: 3000, sha256: sha256(data), mimeType: 'application/octet-stream' },
    ]);
    expect(agent.config.contentDigest).toBe(digestOf(agent.config));
    expect((await u.request('GET', `/v1/agents/${agent.agentId}`)).body.config.knowledgeFiles).toEqual(agent.config.knowledgeFiles);
    const copies = await copiesOf(u, agent.agentId);
    expect(copies.get(sha256('# Guide\n'))?.toString()).toBe('# Guide\n');
    expect(copies.get(sha256(data))?.equals(data)).toBe(true);
    // The copies live outside the workspace: listings show the user's files only.
    const listed = (await u.request('GET', '/v1/agent/files?recursive=true')).body.entries.map((e: { path: string }) => e.path) as string[];
    expect(listed.filter((p) => !p.startsWith('/files/projects'))).toEqual(['/files/data.bin', '/files/docs', '/files/docs/guide.md']);
  });

  it('knowledge — re-submitting unchanged files is no change; new bytes at the same path are pinned into a new config', async () => {
    const u = await stack.user();
    await put(u, '/files/k.md', 'version 1');
    const agent = await createAgent(u, { name: 'Pinner', knowledgeFiles: [{ path: '/files/k.md' }] });
    const first = agent.config;

    // Check (1) of docs/api/agents.md#update sees the stored form: same bytes → the current config,
    // whatever the base says.
    const same = await u.request('PATCH', `/v1/agents/${agent.agentId}`, { baseConfigId: 'cfg_00000000000000000000000000000000', knowledgeFiles: [{ path: '/files/k.md' }] });
    expect(same.status, same.text).toBe(200);
    expect(same.body.currentConfigId).toBe(first.configId);

    await put(u, '/files/k.md', 'version two');
    const stale = await u.request('PATCH', `/v1/agents/${agent.agentId}`, { baseConfigId: 'cfg_00000000000000000000000000000000', knowledgeFiles: [{ path: '/files/k.md' }] });
    expect(stale.status).toBe(409);
    const repinned = await u.request('PATCH', `/v1/agents/${agent.agentId}`, { baseConfigId: first.configId, knowledgeFiles: [{ path: '/files/k.md' }] });
    expect(repinned.status, repinned.text).toBe(200);
    const second = repinned.body.config;
    expect(second.configId).not.toBe(first.configId);
    expect(second.knowledgeFiles).toEqual([{ path: '/files/k.md', size: 11, sha256: sha256('version two'), mimeType: 'text/markdown' }]);
    expect(second.contentDigest).not.toBe(first.contentDigest);
    expect(second.contentDigest).toBe(digestOf(second));

    // A PATCH of another field keeps the pinned copy without reading the file again.
    await put(u, '/files/k.md', 'version 3');
    const renamed = await u.request('PATCH', `/v1/agents/${agent.agentId}`, { baseConfigId: second.configId, name: 'Renamed' });
    expect(renamed.body.config.knowledgeFiles).toEqual(second.knowledgeFiles);

    const versions = (await u.request('GET', `/v1/agents/${agent.agentId}/versions`)).body.versions as { configId: string; knowledgeFiles: unknown }[];
    expect(versions.map((v) => v.configId)).toEqual([renamed.body.config.configId, second.configId, first.configId]);
    expect(versions[2]!.knowledgeFiles).toEqual(first.knowledgeFiles);
  });

  it('knowledge — a config keeps its pinned copy after the workspace file is overwritten or deleted', async () => {
    const u = await stack.user();
    await put(u, '/files/keep.txt', 'original');
    const agent = await createAgent(u, { name: 'Keeper', knowledgeFiles: [{ path: '/files/keep.txt' }] });
    const chat = (await u.request('POST', `/v1/agents/${agent.agentId}/chats`, { title: 'pinned' })).body;
    await put(u, '/files/keep.txt', 'overwritten');
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/keep.txt')).status).toBe(200);
    const pinned = (await u.request('GET', `/v1/agents/${agent.agentId}/chats/${chat.chatId}`)).body.config;
    expect(pinned.knowledgeFiles).toEqual([{ path: '/files/keep.txt', size: 8, sha256: sha256('original'), mimeType: 'text/plain' }]);
    expect((await copiesOf(u, agent.agentId)).get(sha256('original'))?.toString()).toBe('original');
    // The file is gone now: pinning it again is refused, and nothing changes.
    const missing = await u.request('PATCH', `/v1/agents/${agent.agentId}`, { baseConfigId: agent.currentConfigId, knowledgeFiles: [{ path: '/files/keep.txt' }] });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'FILE_NOT_FOUND', details: { path: '/files/keep.txt', field: 'knowledgeFiles[0].path' } });
    expect((await u.request('GET', `/v1/agents/${agent.agentId}`)).body.currentConfigId).toBe(agent.currentConfigId);
  });

  it('knowledge — a missing file, a directory and an invalid path are refused and create nothing', async () => {
    const u = await stack.user();
    await put(u, '/files/ok.md', 'ok');
    await put(u, '/files/dir/in.md', 'in');
    const missing = await u.request('POST', '/v1/agents', { name: 'A', knowledgeFiles: [{ path: '/files/ok.md' }, { path: '/files/nope.md' }] });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'FILE_NOT_FOUND', details: { path: '/files/nope.md', field: 'knowledgeFiles[1].path' } });
    const dir = await u.request('POST', '/v1/agents', { name: 'A', knowledgeFiles: [{ path: '/files/dir' }] });
    expect(dir.status).toBe(400);
    expect(dir.body.error).toMatchObject({ code: 'IS_A_DIRECTORY', details: { path: '/files/dir', field: 'knowledgeFiles[0].path' } });
    for (const bad of ['/etc/passwd', '/files/../x', '/filesx', 'files/ok.md']) {
      const res = await u.request('POST', '/v1/agents', { name: 'A', knowledgeFiles: [{ path: '/files/ok.md' }, { path: bad }] });
      expect(res.status, bad).toBe(400);
      expect(res.body.error, bad).toMatchObject({ code: 'INVALID_PATH', details: { field: 'knowledgeFiles[1].path' } });
    }
    // Another user's file does not exist for this one.
    const other = await stack.user();
    expect((await other.request('POST', '/v1/agents', { name: 'A', knowledgeFiles: [{ path: '/files/ok.md' }] })).body.error.code).toBe('FILE_NOT_FOUND');
    expect((await u.request('GET', '/v1/agents')).body.pagination.total).toBe(0);
  });

  it('knowledge — deleting the Agent removes its copies within 5 s; another Agent keeps its own copy of the same bytes', async () => {
    const u = await stack.user();
    await put(u, '/files/shared.md', 'shared bytes');
    const gone = await createAgent(u, { name: 'Gone', knowledgeFiles: [{ path: '/files/shared.md' }] });
    const kept = await createAgent(u, { name: 'Kept', knowledgeFiles: [{ path: '/files/shared.md' }] });
    expect([...(await copiesOf(u, gone.agentId)).keys()]).toEqual([sha256('shared bytes')]);
    const started = Date.now();
    expect((await u.request('DELETE', `/v1/agents/${gone.agentId}`)).status).toBe(204);
    await expect.poll(async () => (await copiesOf(u, gone.agentId)).size, FIVE_SECONDS).toBe(0);
    console.info(`knowledge copies removed ${Date.now() - started} ms after the delete`);
    expect([...(await copiesOf(u, kept.agentId)).keys()]).toEqual([sha256('shared bytes')]);
    expect((await u.request('GET', '/v1/agent/files/read?path=/files/shared.md')).body.content).toBe('shared bytes');
  });
});

describe('file events', () => {
  it('events — upload, overwrite, move and delete publish file.created, file.updated, file.moved and file.deleted for their user, in order', async () => {
    const u = await stack.user();
    const since = new Date(Date.now() - 1_000);
    await upload(stack.url, u, { filename: 'e.md', content: 'one' }, { path: '/files/ev/' });
    await upload(stack.url, u, { filename: 'e.md', content: 'three' }, { path: '/files/ev/e.md', onConflict: 'overwrite' });
    await upload(stack.url, u, { filename: 'f.md', content: 'f' }, { path: '/files/ev/' });
    expect((await u.request('POST', '/v1/agent/files/move', { from: '/files/ev/f.md', to: '/files/ev/g.md' })).status).toBe(200);
    expect((await u.request('DELETE', '/v1/agent/files?path=/files/ev&recursive=true')).status).toBe(200);
    const nats = await testNats();
    try {
      // Only this test's folder: the user's Home context file is written on their first request.
      const mine = async () =>
        (await readEvents(nats, { subject: 'files.>', since })).filter((e) => e.data.userId === u.sub && (e.data as { path: string }).path.startsWith('/files/ev'));
      await expect.poll(async () => (await mine()).length, FIVE_SECONDS).toBe(5);
      const events = await mine();
      expect(events.map((e) => [e.type, e.data])).toEqual([
        ['file.created', { userId: u.sub, path: '/files/ev/e.md', kind: 'file', size: 3, sha256: sha256('one') }],
        ['file.updated', { userId: u.sub, path: '/files/ev/e.md', kind: 'file', size: 5, sha256: sha256('three') }],
        ['file.created', { userId: u.sub, path: '/files/ev/f.md', kind: 'file', size: 1, sha256: sha256('f') }],
        ['file.moved', { userId: u.sub, from: '/files/ev/f.md', path: '/files/ev/g.md', kind: 'file' }],
        // A recursive delete is one event for the directory, whatever it held.
        ['file.deleted', { userId: u.sub, path: '/files/ev', kind: 'directory' }],
      ]);
      expect(events[0]).toMatchObject({ specversion: '1.0', source: '/workspace/files', subject: '/files/ev/e.md' });
    } finally {
      await nats.close();
    }
  });
});

describe('knowledge cascade after downtime', () => {
  it('knowledge — a files service that was down when the Agent was deleted removes its copies when it starts', async () => {
    const u = await stack.user();
    await put(u, '/files/late.md', 'late');
    const agent = await createAgent(u, { name: 'Late', knowledgeFiles: [{ path: '/files/late.md' }] });
    const replicas = Object.keys(stack.services).filter((k) => k === 'files' || k.startsWith('files#'));
    await Promise.all(replicas.map((k) => stack.services[k]!.stop()));
    try {
      expect((await u.request('DELETE', `/v1/agents/${agent.agentId}`)).status).toBe(204);
      expect([...(await copiesOf(u, agent.agentId)).keys()]).toEqual([sha256('late')]);
    } finally {
      for (const k of replicas) stack.services[k] = await restartService(stack.services[k]!);
    }
    await expect.poll(async () => (await copiesOf(u, agent.agentId)).size, { timeout: 10_000, interval: 200 }).toBe(0);
  });
});
