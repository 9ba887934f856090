import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pattern, upload } from './support/files.js';
import { buildTree, download, list, move, pool, put, ready, sha256, stat, wholeTreeIn, type Entry } from './support/files-api.js';
import type { ApiResponse, ApiUser, Stack } from './support/stack.js';
import { startStack } from './support/stack.js';
import { s3Client, testRedis } from './support/backends.js';
import { killProcesses, replicaKeys, reviveProcesses } from './support/processes.js';

let stack: Stack;
beforeAll(async () => {
  // A short grace and pending time, so that the sweep after the crashes is seen within the test.
  stack = await startStack({ filesEnv: { FILE_GC_GRACE_MS: '0', FILE_SWEEP_INTERVAL_MS: '500', UPLOAD_PENDING_MS: '10000' } });
});
afterAll(async () => {
  await stack?.stop();
});

const MiB = 1024 * 1024;
const mine = (entries: Entry[]) => entries.filter((e) => e.path !== '/files/projects' && !e.path.startsWith('/files/projects/'));

const replicas = (name: string) => replicaKeys(stack, name);
const kill = (keys: string[]) => killProcesses(stack, keys);
async function revive(keys: string[]): Promise<void> {
  await reviveProcesses(stack, keys);
  await ready(stack.url);
}

/**
 * Waits until the user's file calls are served again, through every gateway replica: a gateway
 * may still answer 503 (retryable) for a moment after /readyz turned 200.
 */
async function serving(u: ApiUser): Promise<void> {
  const probe = async () => {
    const statuses = await Promise.all(Object.keys(stack.services).filter((k) => k.startsWith('gateway')).map(() => u.request('GET', '/v1/agent/files')));
    return statuses.every((r) => r.status === 200);
  };
  await expect.poll(probe, { timeout: 30_000, interval: 100 }).toBe(true);
}

type Outcome = { res?: ApiResponse; error?: unknown };
const settle = (p: Promise<ApiResponse>): Promise<Outcome> => p.then((res) => ({ res }), (error: unknown) => ({ error }));

/** A failed call may only fail as a client can tell: an envelope 5xx, or a broken connection. */
function failedCleanly(o: Outcome): void {
  if (o.res) {
    expect(o.res.status, o.res.text).toBeGreaterThanOrEqual(500);
    expect(Object.keys(o.res.body ?? {}), o.res.text).toEqual(['error']);
  } else {
    expect(o.error).toBeInstanceOf(Error);
  }
}

/**
 * An upload of `size` streamed bytes that calls `atBytes` once `at` bytes were produced; the
 * sha256 is of what was produced, so it is the file's only when every byte was.
 */
function bigUpload(u: ApiUser, path: string, size: number, at: number, atBytes: () => void) {
  const hash = createHash('sha256');
  let sent = 0;
  async function* body() {
    for await (const chunk of pattern(size, 4 * MiB)) {
      hash.update(chunk);
      sent += chunk.byteLength;
      yield chunk;
      if (sent >= at && sent - chunk.byteLength < at) atBytes();
    }
  }
  const outcome = settle(upload(stack.url, u, { filename: 'big.bin', content: body() }, { path, onConflict: 'overwrite' }));
  return { outcome, digest: () => (sent === size ? hash.digest('hex') : undefined) };
}

/** The file at `path` is whole: listed once, with the sha256 and size its downloaded bytes have. */
async function whole(u: ApiUser, path: string): Promise<Entry | undefined> {
  const entry = await stat(u, path);
  if (!entry) return undefined;
  const got = await download(stack.url, u, path);
  expect(got.status).toBe(200);
  expect(got.bytes.length, path).toBe(entry.size);
  expect(got.sha256, path).toBe(entry.sha256);
  return entry;
}

async function uploadWorksAfter(u: ApiUser, what: string) {
  const content = `written after ${what}\n`;
  const res = await upload(stack.url, u, { filename: 'after.md', content }, { path: `/files/after/${what}.md` });
  expect(res.status, res.text).toBe(200);
  expect(res.body).toEqual({ success: true, path: `/files/after/${what}.md`, size: Buffer.byteLength(content), mimeType: 'text/markdown', sha256: sha256(content) });
  expect((await u.request('GET', `/v1/agent/files/read?path=/files/after/${what}.md`)).body.content).toBe(content);
}

describe('files — crashes', () => {
  it('crash — the files service killed mid-upload: afterwards the old content or the new one, whole; uploads work again', async () => {
    const u = await stack.user();
    const old = await put(stack, u, '/files/big.bin', 'the old content\n');
    const size = 96 * MiB;
    let crash: Promise<void> | undefined;
    const up = bigUpload(u, '/files/big.bin', size, 24 * MiB, () => {
      crash = kill(replicas('files')).then(() => revive(replicas('files')));
    });
    const outcome = await up.outcome;
    await crash;
    expect(crash, 'the files service was killed during the upload').toBeDefined();
    await serving(u);
    const now = await whole(u, '/files/big.bin');
    console.log(`files killed mid-upload: the upload answered ${outcome.res?.status ?? String(outcome.error)}; the file is ${now?.sha256 === old.sha256 ? 'the old one' : 'the new one'}`);
    const fresh = up.digest();
    if (outcome.res?.status === 200) {
      expect(outcome.res.body).toEqual({ success: true, path: '/files/big.bin', size, mimeType: 'application/octet-stream', sha256: fresh });
      expect(now?.sha256).toBe(fresh);
    } else {
      failedCleanly(outcome);
      expect([old.sha256, fresh].filter(Boolean), 'the old content or all of the new').toContain(now?.sha256);
    }
    expect(mine(await list(u, '/files', { recursive: true })).map((e) => e.path)).toEqual(['/files/big.bin']);
    await uploadWorksAfter(u, 'files-crash');
  }, 90_000);

  it('crash — the files service killed mid-move of a directory of 3,008 files: one tree, whole, every file with its sha256', async () => {
    const u = await stack.user();
    const tree = await buildTree(stack, u, '/files/src', 47, 6);
    expect(tree.files.size).toBe(3008);
    let at: 'a' | 'b' = 'a';
    for (const delay of [5, 30, 90]) {
      const [from, to] = at === 'a' ? ['/files/src', '/files/dst'] : ['/files/dst', '/files/src'];
      const moving = settle(move(u, from, to));
      await sleep(delay); // where the kill lands is what varies between rounds
      await kill(replicas('files'));
      const outcome = await moving;
      await revive(replicas('files'));
      await serving(u);
      const state = wholeTreeIn(await list(u, '/files', { recursive: true }), '/files/src', '/files/dst', tree);
      expect(['a', 'b'], `after a kill ${delay} ms into the move: ${state}`).toContain(state);
      console.log(`files killed ${delay} ms into a move: it answered ${outcome.res?.status ?? String(outcome.error)}; the tree is at ${state === 'a' ? '/files/src' : '/files/dst'}`);
      if (outcome.res?.status === 200) expect(state, 'a move that answered 200 happened').toBe(at === 'a' ? 'b' : 'a');
      else failedCleanly(outcome);
      at = state as 'a' | 'b';
    }
    const root = at === 'a' ? '/files/src' : '/files/dst';
    const files = (await list(u, root, { recursive: true })).filter((e) => e.type === 'file');
    expect(files.filter((e) => e.sha256 !== tree.files.get(e.path.slice(root.length + 1))).map((e) => e.path)).toEqual([]);
    const downloads = await pool(files, 8, async (e) => (await download(stack.url, u, e.path)).sha256 === tree.files.get(e.path.slice(root.length + 1)));
    expect(downloads.filter((good) => !good)).toHaveLength(0);
    expect(await move(u, root, '/files/after-crash')).toMatchObject({ status: 200 });
    await uploadWorksAfter(u, 'move-crash');
  }, 120_000);

  it('crash — the gateway killed mid-upload: nothing is stored, an overwritten file keeps its old content; uploads work again', async () => {
    const u = await stack.user();
    const old = await put(stack, u, '/files/keep.bin', 'kept through a gateway crash\n');
    let crash: Promise<void> | undefined;
    let started = 0;
    const killWhenBothStarted = () => {
      if (++started === 2) crash = kill(['gateway']).then(() => revive(['gateway']));
    };
    const overwrite = bigUpload(u, '/files/keep.bin', 64 * MiB, 16 * MiB, killWhenBothStarted);
    const fresh = bigUpload(u, '/files/fresh.bin', 64 * MiB, 16 * MiB, killWhenBothStarted);
    const outcomes = await Promise.all([overwrite.outcome, fresh.outcome]);
    await crash;
    expect(crash, 'the gateway was killed during the uploads').toBeDefined();
    for (const o of outcomes) expect(o.res?.status ?? 0, o.res?.text).not.toBe(200);
    await serving(u);
    expect((await whole(u, '/files/keep.bin'))?.sha256).toBe(old.sha256);
    expect(await stat(u, '/files/fresh.bin')).toBeUndefined();
    expect(mine(await list(u, '/files', { recursive: true })).map((e) => e.path)).toEqual(['/files/keep.bin']);
    await uploadWorksAfter(u, 'gateway-crash');
  }, 90_000);

  it('crash — after the crashes, the sweep leaves no object in the bucket that nothing references', async () => {
    const bucket = stack.services.files!.env.S3_BUCKET!;
    const redis = testRedis('crash-sweep');
    const s3 = s3Client();
    try {
      // What the index references: every user's reference counts (entries and pins) of this bucket.
      const referenced = async () => {
        const keys = new Set<string>();
        for (const node of 'nodes' in redis ? redis.nodes('master') : [redis]) {
          for (const name of await node.keys(`{u:*}:fs:${bucket}:refs`)) for (const key of await redis.hkeys(name)) keys.add(key);
        }
        return keys;
      };
      const stored = async () => {
        const keys: string[] = [];
        for await (const o of s3.listObjectsV2(bucket, '', true) as AsyncIterable<{ name?: string }>) if (o.name) keys.push(o.name);
        return keys.sort();
      };
      const unreferenced = async () => {
        const refs = await referenced();
        return (await stored()).filter((k) => !refs.has(k));
      };
      await expect.poll(unreferenced, { timeout: 30_000, interval: 500 }).toEqual([]);
      expect((await referenced()).size).toBeGreaterThan(0);
    } finally {
      await redis.quit();
    }
  }, 60_000);
});
