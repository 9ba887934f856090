import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { errors, summaryWithin } from '@workspace/platform';
import type { CompletedPart } from '@workspace/proto/workspace/files/v1/files';
import { PartBuffer } from './part-buffer.js';

/**
 * Part buffers of one upload: with two, two part PUTs can be in flight at once (the store
 * writes one while the next arrives) and memory stays two parts, whatever the body's length.
 */
export const PART_BUFFERS = 2;
/** Part URLs asked for per UploadParts call: fewer round trips for a fast client. */
export const URL_BATCH = 8;
/**
 * URLs older than this are asked for again: each UploadParts call also keeps the pending upload
 * alive, and a slow client may take long over a batch of parts, longer than a URL lives.
 */
export const URL_MAX_AGE_MS = 5 * 60_000;
/** S3's limit on the parts of one multipart upload. */
export const MAX_PARTS = 10_000;

/** What BeginUpload decided for this upload. */
export interface UploadTarget {
  /** Presigned PUT for a body that fits in one part. */
  putUrl: string;
  /** Every part but the last has exactly this many bytes. */
  partSize: number;
  /** The largest body accepted (inclusive). */
  maxBytes: number;
  /** A body of at most this many bytes is sent with its content summary (0: none). */
  summaryMaxBytes?: number;
}

/** Where the bytes go: the files service's UploadParts and ReserveUpload, and the object store's PUT. */
export interface PartSink {
  /**
   * Reserves quota for every byte sent so far plus the piece about to go (`totalBytes`, a
   * running total), before it goes: refused (QUOTA_EXCEEDED) while the body still streams.
   */
  reserve(totalBytes: number): Promise<void>;
  /** Presigned URLs of parts `first`, `first + 1`, … (`count` of them). */
  partUrls(first: number, count: number): Promise<string[]>;
  /** PUTs `body` to a presigned URL and resolves with the store's ETag. */
  put(url: string, body: Buffer, signal: AbortSignal): Promise<string>;
}

/** What CommitUpload needs to know about the bytes. */
export interface SentBody {
  size: number;
  /** SHA-256 of the bytes as they passed, lowercase hex. */
  sha256: string;
  /** Empty when the body went by the single PUT. */
  parts: CompletedPart[];
  /** The content's search summary, for a body of at most `summaryMaxBytes` (it is all in hand then). */
  summary?: Buffer;
}

export interface SendOptions {
  target: UploadTarget;
  sink: PartSink;
  /** Cancels the transfer (the client went away). */
  signal?: AbortSignal | undefined;
  /** The clock that ages part URLs; tests pass their own. */
  now?: () => number;
  /**
   * An upper bound of the body's size, when known (Content-Length): a body known to span
   * parts takes its first part buffer whole at once instead of growing it by doubling, whose
   * copies would be garbage as large again as the part.
   */
  sizeAtMost?: number | undefined;
}

/**
 * Streams an upload's bytes to the store, hashing and counting them as they pass. A body of at
 * most one part is one PUT to `putUrl`; a longer one goes part by part, up to two parts in
 * flight, reading paused while both buffers are out (at most two part buffers), so memory does
 * not grow with the body. Over
 * `maxBytes` → PAYLOAD_TOO_LARGE. A failed part PUT destroys `source` at once, so the client is
 * not kept sending into an upload that cannot succeed. On any failure the PUT in flight is
 * cancelled; cleaning up the pending upload is the caller's.
 */
export async function sendBody(source: Readable, options: SendOptions): Promise<SentBody> {
  const { target, signal } = options;
  const cancel = new AbortController();
  const putSignal = signal ? AbortSignal.any([signal, cancel.signal]) : cancel.signal;
  const stopReading = (err: unknown) => source.destroy(err instanceof Error ? err : errors.internal(err));
  const sender = new PartSender({ ...options, signal: putSignal, onPartFailed: stopReading });
  const hash = createHash('sha256');
  let size = 0;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > target.maxBytes) throw errors.payloadTooLarge(target.maxBytes);
      hash.update(chunk);
      await sender.write(chunk);
    }
    const { parts, summary } = await sender.finish();
    return { size, sha256: hash.digest('hex'), parts, ...(summary && { summary }) };
  } catch (err) {
    cancel.abort(err);
    throw err;
  }
}

interface SenderOptions extends SendOptions {
  signal: AbortSignal;
  /** Called when a part PUT fails while the body is still being read. */
  onPartFailed: (err: unknown) => void;
}

/** Cuts bytes into parts and sends each full one while the next fills. */
class PartSender {
  private filling: PartBuffer;
  private buffers = 1;
  private readonly inFlight: { buffer: PartBuffer; done: Promise<void> }[] = [];
  private nextPart = 1;
  /** Bytes of the parts handed to the store so far. */
  private sent = 0;
  private urls = { from: 1, at: 0, list: [] as string[] };
  private readonly parts: CompletedPart[] = [];
  private readonly now: () => number;

  constructor(private readonly o: SenderOptions) {
    this.now = o.now ?? Date.now;
    this.filling = new PartBuffer(o.target.partSize, { whole: (o.sizeAtMost ?? 0) > o.target.partSize });
  }

  async write(chunk: Buffer): Promise<void> {
    for (let offset = 0; offset < chunk.length; ) {
      // A full part is sent only once a byte follows it, so a body of exactly one part is
      // still the single PUT, and the last part is never empty.
      if (this.filling.full) await this.sendFilling();
      offset += this.filling.fill(chunk, offset);
    }
  }

  /**
   * Sends what is left; resolves with the parts (none for the single PUT) and, for a body that
   * is one buffer of at most `summaryMaxBytes`, its content summary.
   */
  async finish(): Promise<{ parts: CompletedPart[]; summary?: Buffer }> {
    if (this.nextPart === 1) {
      const body = this.filling.bytes();
      await this.o.sink.reserve(body.length);
      await this.o.sink.put(this.o.target.putUrl, body, this.o.signal);
      // After the PUT: `body` is a view of the part buffer, unchanged until the next fill.
      const summary = summaryWithin(body, this.o.target.summaryMaxBytes ?? 0);
      return summary ? { parts: [], summary } : { parts: [] };
    }
    await this.sendFilling(false);
    while (this.inFlight.length > 0) await this.settleOldest();
    return { parts: this.parts };
  }

  /** Starts the PUT of the filled part, then finds a buffer for the next (waiting for one if all are out). */
  private async sendFilling(more = true): Promise<void> {
    const partNumber = this.nextPart++;
    const buffer = this.filling;
    this.sent += buffer.length;
    await this.o.sink.reserve(this.sent);
    const url = await this.urlOf(partNumber);
    const done = this.o.sink.put(url, buffer.bytes(), this.o.signal).then((etag) => {
      this.parts.push({ partNumber, etag });
    });
    done.catch(this.o.onPartFailed);
    this.inFlight.push({ buffer, done });
    if (!more) return;
    if (this.buffers < PART_BUFFERS) {
      this.buffers++;
      // The body is known to span parts: a whole part at once, not grown by doubling.
      this.filling = new PartBuffer(this.o.target.partSize, { whole: true });
    } else {
      this.filling = await this.settleOldest();
    }
    this.filling.reset();
  }

  /** Waits for the oldest part in flight; returns its buffer, free again. */
  private async settleOldest(): Promise<PartBuffer> {
    const flight = this.inFlight.shift()!;
    await flight.done;
    return flight.buffer;
  }

  private async urlOf(partNumber: number): Promise<string> {
    // Only a service that offers more than partSize × MAX_PARTS bytes lets a body get here.
    if (partNumber > MAX_PARTS) throw errors.payloadTooLarge(this.o.target.partSize * MAX_PARTS);
    const cached = this.urls.list[partNumber - this.urls.from];
    if (cached !== undefined && this.now() - this.urls.at < URL_MAX_AGE_MS) return cached;
    const at = this.now();
    const list = await this.o.sink.partUrls(partNumber, Math.min(URL_BATCH, MAX_PARTS - partNumber + 1));
    this.urls = { from: partNumber, at, list };
    const url = list[0];
    if (url === undefined) throw errors.internal(new Error(`UploadParts gave no URL for part ${partNumber}`));
    return url;
  }
}
