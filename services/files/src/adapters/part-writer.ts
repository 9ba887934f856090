import type { Client } from 'minio';

/** S3 refuses parts under 5 MiB (but the last) and uploads of more than 10,000 parts. */
export const MIN_PART_SIZE = 5 * 1024 * 1024;
export const MAX_PARTS = 10_000;

/** The smallest part size, in whole MiB and at least `preferred`, that fits `maxBytes` in 10,000 parts. */
export function partSizeFor(maxBytes: number, preferred: number): number {
  const mib = 1024 * 1024;
  const needed = Math.ceil(maxBytes / MAX_PARTS / mib) * mib;
  return Math.max(MIN_PART_SIZE, preferred, needed);
}

/**
 * Fills part buffers from an async byte source. Two buffers alternate: one is being uploaded
 * while the other fills, so memory per upload is at most 2 × partSize whatever the length,
 * and reading pauses (backpressure) while both are busy. A buffer starts small and doubles up
 * to partSize, so a small file costs about its own size, not a whole part.
 */
class PartBuffers {
  static readonly INITIAL = 64 * 1024;
  readonly #partSize: number;
  readonly #buffers: (Buffer | undefined)[] = [undefined, undefined];
  #current = 0;
  #filled = 0;

  constructor(partSize: number) {
    this.#partSize = partSize;
  }

  get filled(): number {
    return this.#filled;
  }

  /** Copies as much of `chunk` as fits in this part; returns what is left of it. */
  put(chunk: Uint8Array): Uint8Array {
    const target = this.#reserve(chunk.byteLength);
    const n = Math.min(chunk.byteLength, target.byteLength - this.#filled);
    target.set(chunk.subarray(0, n), this.#filled);
    this.#filled += n;
    return chunk.subarray(n);
  }

  full(): boolean {
    return this.#filled === this.#partSize;
  }

  /** The filled part; the next `put` goes to the other buffer. */
  take(): Buffer {
    const part = (this.#buffers[this.#current] ?? Buffer.alloc(0)).subarray(0, this.#filled);
    this.#current = 1 - this.#current;
    this.#filled = 0;
    return part;
  }

  /** The current buffer, grown (doubling, at most partSize) so that `wanted` more bytes fit if they may. */
  #reserve(wanted: number): Buffer {
    const current = this.#buffers[this.#current];
    if (current && (current.byteLength - this.#filled >= wanted || current.byteLength === this.#partSize)) return current;
    let size = Math.max(PartBuffers.INITIAL, current?.byteLength ?? 0);
    while (size < this.#filled + wanted && size < this.#partSize) size *= 2;
    const grown = Buffer.allocUnsafe(Math.min(size, this.#partSize));
    current?.copy(grown, 0, 0, this.#filled);
    this.#buffers[this.#current] = grown;
    return grown;
  }
}

/**
 * Uploads a stream of unknown length with bounded memory: a body shorter than one part is a
 * single PUT; anything longer is a multipart upload, aborted if the body or S3 fails, so a
 * failed write leaves no object (and no parts) behind. minio's own stream upload is not used
 * because it buffers 64 MiB+ parts and first lists incomplete uploads (a call some S3-compatible servers
 * answer with 501).
 */
export async function writeParts(options: {
  client: Client;
  bucket: string;
  key: string;
  body: AsyncIterable<Uint8Array>;
  partSize: number;
  headers: Record<string, string>;
  /**
   * When given, the object becomes visible only when this calls `finish` (the single PUT, or the
   * completion of the multipart upload, after every part of `size` bytes is stored); if it throws instead,
   * nothing is left behind. Lets the caller check and decide under its own lock.
   */
  commit?: ((finish: () => Promise<void>, size: number) => Promise<void>) | undefined;
}): Promise<{ size: number }> {
  const { client, bucket, key } = options;
  const buffers = new PartBuffers(options.partSize);
  const iterator = options.body[Symbol.asyncIterator]();
  let size = 0;
  let uploadId: string | undefined;
  let inFlight: Promise<{ part: number; etag: string }> | undefined;
  const etags: { part: number; etag: string }[] = [];

  const send = async (part: Buffer, partNumber: number) => {
    const res = await client.uploadPart({ bucketName: bucket, objectName: key, uploadID: uploadId!, partNumber, headers: { 'Content-Length': String(part.byteLength) } }, part);
    return { part: partNumber, etag: res.etag };
  };

  try {
    let done = false;
    while (!done) {
      const next = await iterator.next();
      done = next.done === true;
      let rest: Uint8Array = done ? new Uint8Array(0) : next.value;
      size += rest.byteLength;
      while (rest.byteLength > 0 || (done && buffers.filled > 0 && uploadId !== undefined)) {
        rest = buffers.put(rest);
        if (!buffers.full() && !done) break;
        // A full buffer, or the last bytes of a multipart upload: hand it over.
        uploadId ??= await client.initiateNewMultipartUpload(bucket, key, options.headers);
        if (inFlight) etags.push(await inFlight);
        inFlight = send(buffers.take(), etags.length + 1);
        if (done) break;
      }
    }
    let finish: () => Promise<void>;
    if (uploadId === undefined) {
      // Everything fit in one part: a plain PUT.
      const whole = buffers.take();
      finish = async () => void (await client.putObject(bucket, key, whole, size, options.headers));
    } else {
      if (inFlight) etags.push(await inFlight);
      inFlight = undefined;
      const id = uploadId;
      finish = async () => void (await client.completeMultipartUpload(bucket, key, id, etags));
    }
    await (options.commit ? options.commit(finish, size) : finish());
    return { size };
  } catch (err) {
    await inFlight?.catch(() => undefined);
    if (uploadId !== undefined) await client.abortMultipartUpload(bucket, key, uploadId).catch(() => undefined);
    await iterator.return?.();
    throw err;
  }
}
