import { createHash } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { errors, summarizeContent } from '@workspace/platform';
import { sendBody, URL_MAX_AGE_MS, type PartSink, type UploadTarget } from './upload-transfer.js';

const target = (partSize: number, maxBytes = 1 << 30): UploadTarget => ({ putUrl: 'put://single', partSize, maxBytes });

/** Records every PUT (a copy of its body, and the buffer it came from) and every URL batch asked for. */
function recordingSink(options: { failPut?: (url: string) => boolean; quota?: number } = {}) {
  const puts: { url: string; body: Buffer; storage: ArrayBufferLike }[] = [];
  const batches: [number, number][] = [];
  const reserved: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const sink: PartSink = {
    reserve: async (total) => {
      if (options.quota !== undefined && total > options.quota) throw errors.quotaExceeded('FILE_QUOTA_BYTES', options.quota, 0);
      reserved.push(total);
    },
    partUrls: async (first, count) => {
      batches.push([first, count]);
      return Array.from({ length: count }, (_, i) => `put://part/${first + i}`);
    },
    put: async (url, body) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      puts.push({ url, body: Buffer.from(body), storage: body.buffer });
      await new Promise((resolve) => setImmediate(resolve));
      inFlight--;
      if (options.failPut?.(url)) throw errors.unavailable('the object store');
      return `"etag-${url}"`;
    },
  };
  return { sink, puts, batches, reserved, maxInFlight: () => maxInFlight };
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function bytesOf(size: number): Buffer {
  return Buffer.from(Array.from({ length: size }, (_, i) => (i * 31 + 7) % 256));
}

/** The body in chunks of `chunk` bytes, as a client's form would arrive. */
function chunked(body: Buffer, chunk: number): Readable {
  const pieces: Buffer[] = [];
  for (let at = 0; at < body.length; at += chunk) pieces.push(body.subarray(at, at + chunk));
  return Readable.from(pieces);
}

describe('upload transfer', () => {
  it('upload transfer — a body of at most summaryMaxBytes comes back with its content summary (text or not); a longer one, or one in parts, without', async () => {
    const text = Buffer.from('export const answer = 42;\n'.repeat(100));
    const binary = bytesOf(4096);
    for (const body of [text, binary, Buffer.alloc(0)]) {
      const sent = await sendBody(chunked(body, 700), { target: { ...target(64 * 1024), summaryMaxBytes: 4096 }, sink: recordingSink().sink });
      expect(Buffer.from(sent.summary!).equals(Buffer.from(summarizeContent(body)))).toBe(true);
    }
    const over = await sendBody(chunked(binary, 700), { target: { ...target(64 * 1024), summaryMaxBytes: 4095 }, sink: recordingSink().sink });
    expect(over.summary).toBeUndefined();
    const unasked = await sendBody(chunked(text, 700), { target: target(64 * 1024), sink: recordingSink().sink });
    expect(unasked.summary).toBeUndefined();
    const parts = await sendBody(chunked(bytesOf(3000), 700), { target: { ...target(1024), summaryMaxBytes: 1 << 20 }, sink: recordingSink().sink });
    expect(parts.parts).toHaveLength(3);
    expect(parts.summary).toBeUndefined();
  });

  it('upload transfer — a body within one part is one PUT to putUrl, with no parts', async () => {
    const { sink, puts, batches } = recordingSink();
    const body = bytesOf(4096);
    const sent = await sendBody(chunked(body, 1000), { target: target(64 * 1024), sink });
    expect(sent).toEqual({ size: 4096, sha256: sha256(body), parts: [] });
    expect(puts.map((p) => p.url)).toEqual(['put://single']);
    expect(puts[0]!.body).toEqual(body);
    expect(batches).toEqual([]);
  });

  it('upload transfer — an empty body and a body of exactly one part are single PUTs too', async () => {
    const empty = recordingSink();
    expect(await sendBody(Readable.from([]), { target: target(16), sink: empty.sink })).toEqual({ size: 0, sha256: sha256(Buffer.alloc(0)), parts: [] });
    expect(empty.puts.map((p) => p.body.length)).toEqual([0]);

    const exact = recordingSink();
    const body = bytesOf(16);
    expect((await sendBody(chunked(body, 5), { target: target(16), sink: exact.sink })).parts).toEqual([]);
    expect(exact.puts.map((p) => p.url)).toEqual(['put://single']);
  });

  it('upload transfer — a longer body goes in parts of part_size (the last one shorter), URLs asked in batches', async () => {
    const { sink, puts, batches } = recordingSink();
    const partSize = 10_000;
    const body = bytesOf(partSize * 9 + 1);
    const sent = await sendBody(chunked(body, 4096), { target: target(partSize), sink });
    expect(sent.size).toBe(body.length);
    expect(sent.sha256).toBe(sha256(body));
    expect(sent.parts).toEqual(Array.from({ length: 10 }, (_, i) => ({ partNumber: i + 1, etag: `"etag-put://part/${i + 1}"` })));
    expect(puts.map((p) => p.body.length)).toEqual([...Array<number>(9).fill(partSize), 1]);
    expect(Buffer.concat(puts.map((p) => p.body))).toEqual(body);
    expect(batches).toEqual([
      [1, 8],
      [9, 8],
    ]);
  });

  it('upload transfer — URLs older than URL_MAX_AGE_MS are asked for again (which also keeps the upload pending)', async () => {
    const { sink, batches, puts } = recordingSink();
    let now = 0;
    const source = new PassThrough();
    const sending = sendBody(source, { target: target(10), sink, now: () => now });
    source.write(bytesOf(25)); // parts 1 and 2 go, with URLs for 1…8
    await expect.poll(() => puts.length).toBe(2);
    now = URL_MAX_AGE_MS;
    source.end(bytesOf(10)); // part 3's cached URL is too old by now
    await sending;
    expect(batches).toEqual([
      [1, 8],
      [3, 8],
    ]);
  });

  it('upload transfer — up to two parts in flight, from at most two part buffers', async () => {
    const recorder = recordingSink();
    const partSize = 64 * 1024;
    await sendBody(chunked(bytesOf(partSize * 6 + 123), 10_000), { target: target(partSize), sink: recorder.sink });
    expect(recorder.maxInFlight()).toBe(2);
    expect(new Set(recorder.puts.map((p) => p.storage)).size).toBe(2);
  });

  it('upload transfer — over max_bytes is PAYLOAD_TOO_LARGE', async () => {
    const { sink } = recordingSink();
    await expect(sendBody(chunked(bytesOf(101), 10), { target: target(1000, 100), sink })).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    // Exactly the limit is accepted (inclusive).
    await expect(sendBody(chunked(bytesOf(100), 10), { target: target(1000, 100), sink })).resolves.toMatchObject({ size: 100 });
  });

  it('upload transfer — a failed part PUT fails the upload at once, though the client is still sending', async () => {
    const { sink } = recordingSink({ failPut: (url) => url === 'put://part/1' });
    const source = new PassThrough();
    source.write(bytesOf(250));
    // Never ended: only the failed PUT can end the transfer.
    await expect(sendBody(source, { target: target(100), sink })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(source.destroyed).toBe(true);
  });

  it('upload transfer — a failure cancels the PUT in flight', async () => {
    let started!: (signal: AbortSignal) => void;
    const putStarted = new Promise<AbortSignal>((resolve) => (started = resolve));
    const sink: PartSink = {
      reserve: async () => {},
      partUrls: async (first, count) => Array.from({ length: count }, (_, i) => `put://part/${first + i}`),
      put: (_url, _body, signal) => {
        started(signal);
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
      },
    };
    const source = new PassThrough();
    const sending = sendBody(source, { target: target(10, 25), sink });
    source.write(bytesOf(15)); // part 1 is full and a byte follows: its PUT starts
    const signal = await putStarted;
    source.write(bytesOf(15)); // 30 > 25
    await expect(sending).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(signal.aborted).toBe(true);
  });

  it('upload transfer — every piece reserves its bytes (a running total) before its PUT', async () => {
    const { sink, puts, reserved } = recordingSink();
    await sendBody(chunked(bytesOf(100 * 3 + 7), 13), { target: target(100), sink });
    expect(reserved).toEqual([100, 200, 300, 307]);
    expect(puts.map((p) => p.url)).toEqual(['put://part/1', 'put://part/2', 'put://part/3', 'put://part/4']);
    const single = recordingSink();
    await sendBody(chunked(bytesOf(42), 5), { target: target(100), sink: single.sink });
    expect(single.reserved).toEqual([42]);
  });

  it('upload transfer — a refused reservation stops the body before the bytes that do not fit are sent', async () => {
    const { sink, puts } = recordingSink({ quota: 250 });
    const source = chunked(bytesOf(100 * 5), 10);
    await expect(sendBody(source, { target: target(100), sink })).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED' });
    expect(puts.map((p) => p.url)).toEqual(['put://part/1', 'put://part/2']);
    const small = recordingSink({ quota: 10 });
    await expect(sendBody(chunked(bytesOf(11), 3), { target: target(100), sink: small.sink })).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED' });
    expect(small.puts).toEqual([]);
  });
});
