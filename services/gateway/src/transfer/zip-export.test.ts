import archiver from 'archiver';
import { describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { archiverSafeName } from './zip-export.js';

async function zipNames(names: string[]): Promise<{ name: string; utf8: boolean }[]> {
  const archive = archiver('zip');
  const chunks: Buffer[] = [];
  archive.on('data', (c: Buffer) => chunks.push(c));
  for (const name of names) archive.append(Buffer.from('x'), { name: archiverSafeName(name) });
  await archive.finalize();
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(Buffer.concat(chunks), { lazyEntries: false }, (err, zip) => {
      if (err || !zip) return reject(err);
      const out: { name: string; utf8: boolean }[] = [];
      zip.on('entry', (e: yauzl.Entry) => out.push({ name: e.fileName, utf8: (e.generalPurposeBitFlag & 0x800) !== 0 }));
      zip.on('end', () => resolve(out));
      zip.on('error', reject);
    });
  });
}

describe('zip export', () => {
  it('export — entry names reach the archive exactly, drive-letter look-alikes and UTF-8 included', async () => {
    const names = ['todo:list/a.md', 'Cx:/x', 'ab:c:d/e', 'Plan: Q3/x', 'plain/file.txt', 'Plan 研究/ノート.md', ' spaced: name/x', '_:/y'];
    const got = await zipNames(names);
    expect(got.map((e) => e.name)).toEqual(names);
    expect(got.find((e) => e.name === 'Plan 研究/ノート.md')?.utf8).toBe(true);
  });
});

describe('export — compression', () => {
  it('export — text is worth deflating; random bytes and tiny samples are decided without fuss', async () => {
    const { randomBytes } = await import('node:crypto');
    const { worthCompressing } = await import('./zip-export.js');
    expect(worthCompressing(Buffer.from('the same words again and again. '.repeat(2048)))).toBe(true);
    expect(worthCompressing(randomBytes(64 * 1024))).toBe(false);
    expect(worthCompressing(randomBytes(4 * 1024))).toBe(false);
    expect(worthCompressing(randomBytes(200))).toBe(true);
    // Random-looking byte counts, but repeats deflate finds: the probe decides.
    const block = randomBytes(2048);
    expect(worthCompressing(Buffer.concat([block, block]))).toBe(true);
    expect(worthCompressing(Buffer.from(randomBytes(3072).toString('base64')))).toBe(true);
    expect(worthCompressing(Buffer.concat([randomBytes(2048), Buffer.alloc(2048, 0x20)]))).toBe(true);
    for (let i = 0; i < 50; i++) expect(worthCompressing(randomBytes(4096))).toBe(false);
  });
});

describe('export — every streaming reader opens it (Java ZipInputStream rule)', () => {
  async function zipOf(files: Record<string, Buffer>): Promise<{ name: string; method: number; descriptor: boolean; size: number; compressed: number; crc: number; content: Buffer }[]> {
    const { zipStream } = await import('./zip-export.js');
    const { createLogger } = await import('@workspace/platform');
    const items = (async function* () {
      for (const [rel, bytes] of Object.entries(files)) yield { rel, url: rel, size: bytes.byteLength, modifiedAt: new Date() };
    })();
    const read = async (url: string) => (async function* () {
      const bytes = files[url]!;
      for (let i = 0; i < bytes.byteLength; i += 16 * 1024) yield bytes.subarray(i, i + 16 * 1024);
    })();
    const chunks: Buffer[] = [];
    for await (const chunk of zipStream({ items, read, rootName: 'p', logger: createLogger('test', 'silent') })) chunks.push(chunk as Buffer);
    return new Promise((resolve, reject) => {
      yauzl.fromBuffer(Buffer.concat(chunks), { lazyEntries: true, validateEntrySizes: true }, (err, zip) => {
        if (err || !zip) return reject(err);
        const out: Awaited<ReturnType<typeof zipOf>> = [];
        zip.on('entry', (e: yauzl.Entry) => {
          zip.openReadStream(e, (openErr, stream) => {
            if (openErr || !stream) return reject(openErr);
            const parts: Buffer[] = [];
            stream.on('data', (c: Buffer) => parts.push(c)).on('error', reject).on('end', () => {
              out.push({ name: e.fileName, method: e.compressionMethod, descriptor: (e.generalPurposeBitFlag & 0x8) !== 0, size: e.uncompressedSize, compressed: e.compressedSize, crc: e.crc32, content: Buffer.concat(parts) });
              zip.readEntry();
            });
          });
        });
        zip.on('end', () => resolve(out));
        zip.on('error', reject);
        zip.readEntry();
      });
    });
  }

  it('export — incompressible entries are STORED with their sizes up front (small) or deflated at level 0 (streamed), never STORED with a data descriptor; text is deflated', async () => {
    const { randomBytes } = await import('node:crypto');
    const { crc32 } = await import('node:zlib');
    const files = {
      'photo.jpg': randomBytes(300 * 1024),
      'video.mp4': randomBytes(1536 * 1024),
      'notes.md': Buffer.from('again and again. '.repeat(10_000)),
      'log.txt': Buffer.from('over and over. '.repeat(100_000)),
      'tiny.bin': randomBytes(10),
      'empty.txt': Buffer.alloc(0),
    };
    const entries = await zipOf(files);
    expect(entries.map((e) => e.name)).toEqual(Object.keys(files).map((n) => `p/${n}`));
    for (const e of entries) {
      expect(e.content.equals(files[e.name.slice(2) as keyof typeof files])).toBe(true);
      expect(e.crc).toBe(crc32(e.content));
      // Java: "only DEFLATED entries can have EXT descriptor".
      expect(e.method === 0 && e.descriptor).toBe(false);
    }
    const byName = (name: string) => entries.find((e) => e.name === `p/${name}`)!;
    // Read whole (up to 1 MiB): sizes and CRC in the local header, the bytes as they are.
    expect(byName('photo.jpg')).toMatchObject({ method: 0, descriptor: false, compressed: 300 * 1024 });
    // Streamed: level 0, stored deflate blocks, 5 bytes per block (at most 64 KiB) over the size; level 1 would be about the same size but cost time, so check the framing.
    const video = byName('video.mp4');
    expect(video.method).toBe(8);
    expect(video.compressed).toBeGreaterThan(video.size);
    expect(video.compressed).toBeLessThan(video.size * 1.001);
    for (const text of ['notes.md', 'log.txt']) {
      expect(byName(text).method, text).toBe(8);
      expect(byName(text).compressed, text).toBeLessThan(byName(text).size / 10);
    }
  });
});

describe('export — a reader that leaves', () => {
  it('export — closing the archive stops the reads in flight, whole or streamed, and opens no more', async () => {
    const { zipStream } = await import('./zip-export.js');
    const { createLogger } = await import('@workspace/platform');
    const signals: AbortSignal[] = [];
    const sizes = [64 * 1024, 4 * 1024 * 1024, 64 * 1024, 4 * 1024 * 1024, 64 * 1024, 64 * 1024, 64 * 1024, 64 * 1024];
    const items = (async function* () {
      for (const [i, size] of sizes.entries()) yield { rel: `f${i}`, url: String(i), size, modifiedAt: new Date() };
    })();
    // Every object sends its first 16 KiB, then nothing until its read is aborted.
    const read = async (_url: string, signal: AbortSignal) => {
      signals.push(signal);
      return (async function* () {
        yield Buffer.alloc(16 * 1024, 1);
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        throw new Error('aborted');
      })();
    };
    const zip = zipStream({ items, read, rootName: 'p', logger: createLogger('test', 'silent') });
    zip.resume();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(signals.length).toBeGreaterThan(0);
    expect(signals.some((s) => s.aborted)).toBe(false);
    const opened = signals.length;
    zip.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(signals.every((s) => s.aborted)).toBe(true);
    expect(signals.length).toBe(opened);
  });
});

describe('export — memory stays bounded', () => {
  it('export — a reader that does not read holds the archive back: STORED entries wait for their bytes to leave, few objects are read ahead', async () => {
    const { randomBytes } = await import('node:crypto');
    const { zipStream } = await import('./zip-export.js');
    const { createLogger } = await import('@workspace/platform');
    const files = Array.from({ length: 200 }, (_, i) => (i % 10 === 9 ? Buffer.from(`text ${i} `.repeat(5000)) : randomBytes(64 * 1024)));
    let reads = 0;
    const items = (async function* () {
      for (const [i, bytes] of files.entries()) yield { rel: `f${i}`, url: String(i), size: bytes.byteLength, modifiedAt: new Date() };
    })();
    const read = async (url: string) => {
      reads++;
      return (async function* () {
        yield files[Number(url)]!;
      })();
    };
    const zip = zipStream({ items, read, rootName: 'p', logger: createLogger('test', 'silent') });
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The prefetched objects, the one waiting and the one archiver holds; not the 200 (12.5 MiB).
    expect(reads).toBeLessThanOrEqual(8);
    expect(zip.readableLength).toBeLessThan(512 * 1024);
    const chunks: Buffer[] = [];
    for await (const chunk of zip) chunks.push(chunk as Buffer);
    expect(reads).toBe(200);
    const entries = await new Promise<number>((resolve, reject) => {
      yauzl.fromBuffer(Buffer.concat(chunks), { lazyEntries: false, validateEntrySizes: true }, (err, archive) => {
        if (err || !archive) return reject(err);
        let count = 0;
        archive.on('entry', () => count++);
        archive.on('end', () => resolve(count));
        archive.on('error', reject);
      });
    });
    expect(entries).toBe(200);
  }, 30_000);
});
