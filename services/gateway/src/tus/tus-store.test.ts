import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { Upload } from '@tus/utils';
import { describe, expect, it } from 'vitest';
import { AppError, createLogger, errors } from '@workspace/platform';
import type { ObjectStore } from '../http/object-store.js';
import type { FilesClient } from '../routes/files.routes.js';
import type { TusRecord, TusStateRepo } from './tus-state.redis.js';
import { TusStore, tusCall } from './tus-store.js';

const PART = 5;

/** The files service and the object store as far as the tus store uses them, in memory. */
function fakes(options: { conflictAtCommit?: boolean } = {}) {
  const objects = new Map<string, Buffer>();
  const calls: string[] = [];
  let committed: { size: number; sha256: string; parts: { partNumber: number; etag: string }[] } | undefined;
  const files = {
    beginUpload: async () => (calls.push('begin'), { uploadId: 'up1', path: '/files/x', putUrl: 'put', partSize: PART, maxBytes: 1000 }),
    reserveUpload: async (req: { totalBytes: number }) => (calls.push(`reserve ${req.totalBytes}`), {}),
    uploadParts: async (req: { firstPartNumber: number }) => ({ urls: [`part${req.firstPartNumber}`] }),
    commitUpload: async (req: { size: number; sha256: string; parts: { partNumber: number; etag: string }[] }) => {
      calls.push('commit');
      if (options.conflictAtCommit) throw errors.fileExists('/files/x');
      committed = req;
      return { path: '/files/x', size: req.size, mimeType: 'application/octet-stream', sha256: req.sha256 };
    },
    abortUpload: async () => (calls.push('abort'), {}),
  } as unknown as FilesClient;
  const store = { put: async (url: string, body: Buffer) => (objects.set(url, Buffer.from(body)), `"etag-${url}"`) } as unknown as ObjectStore;
  const records = new Map<string, TusRecord>();
  const repo = {
    get: async (id: string) => records.get(id),
    put: async (id: string, record: TusRecord) => void records.set(id, structuredClone(record)),
    delete: async (id: string) => void records.delete(id),
  } as unknown as TusStateRepo;
  const tus = new TusStore({ files, store, repo, logger: createLogger('test', 'silent'), expiryMs: 60_000 });
  return { tus, objects, calls, records, committed: () => committed };
}

const as = <T>(fn: () => Promise<T>) => tusCall.run({ userId: 'u1', requestId: 'r1' }, fn);

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
    expect([...f.objects.keys()]).toEqual(['part1', 'part2', 'part3', 'part4', 'part5']);
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
    await expect(tusCall.run({ userId: 'u2', requestId: 'r' }, () => f.tus.getUpload('t4'))).rejects.toMatchObject({ status_code: 404 });
    const err = await as(() => f.tus.write(Readable.from([Buffer.from('abcdef')]), 't4', 0)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('INVALID_ARGUMENT');
  });
});
