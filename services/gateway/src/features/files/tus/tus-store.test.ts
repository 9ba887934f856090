import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { Upload } from '@tus/utils';
import { describe, expect, it } from 'vitest';
import { AppError, createLogger, errors } from '@workspace/platform';
import type { ObjectStore } from '../../../transfer/object-store.js';

import type { TusState, TusStateRepo } from './tus-state.redis.js';
import { TusStore, tusCall } from './tus-store.js';
import type { FilesClient } from '../../../clients.js';

const PART = 5;

/** The files service and the object store as far as the tus store uses them, in memory. */
function fakes(options: { conflictAtCommit?: boolean; idleTimeoutMs?: number } = {}) {
  const objects = new Map<string, Buffer>();
  const calls: string[] = [];
  let committed: { size: number; sha256: string; parts: { partNumber: number; etag: string }[] } | undefined;
  const files = {
    beginUpload: async () => (calls.push('begin'), { uploadId: 'up1', path: '/files/x', putUrl: 'put', partSize: PART, maxBytes: 1000 }),
    reserveUpload: async (req: { totalBytes: number }) => (calls.push(`reserve ${req.totalBytes}`), {}),
    uploadParts: async (req: { firstPartNumber: number }) => ({ urls: [`part${req.firstPartNumber}`] }),
    uploadTail: async () => ({ putUrls: ['tail0', 'tail1'], getUrls: ['tail0', 'tail1'] }),
    commitUpload: async (req: { size: number; sha256: string; parts: { partNumber: number; etag: string }[] }) => {
      calls.push('commit');
      if (options.conflictAtCommit) throw errors.fileExists('/files/x');
      committed = req;
      return { path: '/files/x', size: req.size, mimeType: 'application/octet-stream', sha256: req.sha256 };
    },
    abortUpload: async () => (calls.push('abort'), {}),
  } as unknown as FilesClient;
  const store = {
    put: async (url: string, body: Buffer) => (objects.set(url, Buffer.from(body)), `"etag-${url}"`),
    get: async (url: string) => Readable.from([objects.get(url)!]),
  } as unknown as ObjectStore;
  const records = new Map<string, TusState>();
  const repo = {
    get: async (id: string) => records.get(id),
    put: async (id: string, state: TusState) => void records.set(id, structuredClone(state)),
    delete: async (id: string) => void records.delete(id),
  } as unknown as TusStateRepo;
  const tus = new TusStore({ files, store, repo, logger: createLogger('test', 'silent'), expiryMs: 60_000, idleTimeoutMs: options.idleTimeoutMs ?? 60_000 });
  return { tus, objects, calls, records, committed: () => committed };
}

const as = <T>(fn: () => Promise<T>, cut = () => undefined) => tusCall.run({ userId: 'u1', requestId: 'r1', cut }, fn);

/** A body that sends `chunks` and then fails, as a client that is cut off. */
function cutOff(chunks: string[]): Readable {
  return Readable.from(
    (async function* () {
      for (const c of chunks) yield Buffer.from(c);
      throw new Error('socket hang up');
    })(),
  );
}

describe('tus store — whole parts to the store, the tail and the hash in the record', () => {
  it('tus store — chunks of any size make parts of exactly the part size; the last byte commits with the SHA-256 of all', async () => {
    const f = fakes();
    const data = 'abcdefghijklmnopqrstuvw'; // 23 bytes: parts of 5, then 3
    await as(() => f.tus.create(new Upload({ id: 't1', size: data.length, offset: 0, metadata: { filename: 'x' } })));
    let offset = 0;
    for (const piece of ['ab', 'cdefghi', 'j', 'klmnopqrst', 'uvw']) {
      offset = await as(() => f.tus.write(Readable.from([Buffer.from(piece)]), 't1', offset));
    }
    expect(offset).toBe(data.length);
    expect([...f.objects.keys()].filter((k) => k.startsWith('part'))).toEqual(['part1', 'part2', 'part3', 'part4', 'part5']);
    expect(f.objects.get('part2')!.toString()).toBe('fghij');
    expect(f.objects.get('part5')!.toString()).toBe('uvw');
    expect(f.committed()).toMatchObject({ size: data.length, sha256: createHash('sha256').update(data).digest('hex') });
    expect((await as(() => f.tus.getUpload('t1'))).offset).toBe(data.length);
  });

  it('tus store — a body cut off keeps the whole parts it delivered; the rest is sent again and the hash is right', async () => {
    const f = fakes();
    const data = 'abcdefghijklmnop';
    await as(() => f.tus.create(new Upload({ id: 't2', size: data.length, offset: 0 })));
    const kept = await as(() => f.tus.write(cutOff(['abcdefg', 'hijkl', 'mn']), 't2', 0));
    expect(kept).toBe(10); // two parts; 'mn' was never acknowledged
    expect((await as(() => f.tus.getUpload('t2'))).offset).toBe(10);
    expect(await as(() => f.tus.write(Readable.from([Buffer.from(data.slice(10))]), 't2', 10))).toBe(data.length);
    expect(f.committed()?.sha256).toBe(createHash('sha256').update(data).digest('hex'));
  });

  it('tus store — a small file goes as one part (the single PUT URL made at creation may have expired); a conflict at commit aborts and forgets the upload', async () => {
    const f = fakes({ conflictAtCommit: true });
    await as(() => f.tus.create(new Upload({ id: 't3', size: 3, offset: 0 })));
    await expect(as(() => f.tus.write(Readable.from([Buffer.from('abc')]), 't3', 0))).rejects.toMatchObject({ code: 'FILE_EXISTS' });
    expect(f.objects.get('part1')!.toString()).toBe('abc');
    expect(f.calls).toEqual(['begin', 'reserve 3', 'commit', 'abort']);
    expect(f.records.has('t3')).toBe(false);
  });

  it('tus store — another user\'s upload is as absent as a missing one; more bytes than the length are refused', async () => {
    const f = fakes();
    await as(() => f.tus.create(new Upload({ id: 't4', size: 4, offset: 0 })));
    await expect(tusCall.run({ userId: 'u2', requestId: 'r', cut: () => undefined }, () => f.tus.getUpload('t4'))).rejects.toMatchObject({ status_code: 404 });
    const err = await as(() => f.tus.write(Readable.from([Buffer.from('abcdef')]), 't4', 0)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('INVALID_ARGUMENT');
  });

  it('tus store — the bytes after the last whole part wait in a tail object of the store, written in turn to two slots; the record holds no bytes', async () => {
    const f = fakes();
    await as(() => f.tus.create(new Upload({ id: 't5', size: 12, offset: 0 })));
    expect(await as(() => f.tus.write(Readable.from([Buffer.from('abc')]), 't5', 0))).toBe(3);
    expect(f.records.get('t5')!.tail).toEqual({ slot: 1, bytes: 3 });
    expect(f.objects.get('tail1')!.toString()).toBe('abc');
    expect(await as(() => f.tus.write(Readable.from([Buffer.from('d')]), 't5', 3))).toBe(4);
    // The next tail goes to the other slot: the one the record names is never overwritten.
    expect(f.records.get('t5')!.tail).toEqual({ slot: 0, bytes: 4 });
    expect(f.objects.get('tail0')!.toString()).toBe('abcd');
    expect(f.objects.get('tail1')!.toString()).toBe('abc');
    expect(JSON.stringify(f.records.get('t5'))).not.toContain('abcd');
    expect(await as(() => f.tus.write(Readable.from([Buffer.from('efghijkl')]), 't5', 4))).toBe(12);
    expect(f.objects.get('part1')!.toString()).toBe('abcde');
    expect(f.objects.get('part2')!.toString()).toBe('fghij');
    expect(f.committed()?.sha256).toBe(createHash('sha256').update('abcdefghijkl').digest('hex'));
  });

  it('tus store — an empty file is stored at creation: committed at once, offset = length = 0', async () => {
    const f = fakes();
    await as(() => f.tus.create(new Upload({ id: 't6', size: 0, offset: 0, metadata: { filename: 'empty.txt' } })));
    expect(f.calls).toEqual(['begin', 'commit']);
    expect(f.committed()).toMatchObject({ size: 0, sha256: createHash('sha256').digest('hex'), parts: [] });
    expect(f.objects.get('put')).toEqual(Buffer.alloc(0));
    expect((await as(() => f.tus.getUpload('t6'))).offset).toBe(0);
    expect(f.records.get('t6')!.committedPath).toBe('/files/x');
  });

  it('tus store — a PATCH that stalls past the idle timeout ends like a cut-off one: the connection is cut, whole parts stay', async () => {
    const f = fakes({ idleTimeoutMs: 50 });
    await as(() => f.tus.create(new Upload({ id: 't7', size: 20, offset: 0 })));
    const stalled = new Readable({ read() {} });
    stalled.push(Buffer.from('abcdefg'));
    let cut = 0;
    const kept = await as(() => f.tus.write(stalled, 't7', 0), () => void cut++);
    expect(cut).toBe(1);
    expect(kept).toBe(5);
    expect(f.records.get('t7')!.parts).toHaveLength(1);
  });

  it('tus store — names that are not UTF-8 (decoded to U+FFFD) are refused before anything begins', async () => {
    const f = fakes();
    const err = await as(() => f.tus.create(new Upload({ id: 't8', size: 3, offset: 0, metadata: { filename: 'a\uFFFD.txt' } }))).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INVALID_PATH' });
    expect(f.calls).toEqual([]);
  });
});
