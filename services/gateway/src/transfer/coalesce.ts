import { Transform, type TransformCallback } from 'node:stream';

/** What a coalesced write gathers before it goes on (a socket write each, not one per field). */
export const COALESCE_BYTES = 64 * 1024;

/**
 * Gathers small chunks into writes of at least `minBytes`: archiver emits a ZIP's headers field
 * by field (chunks of 2–8 bytes, ~40 per entry), and each would otherwise be its own socket
 * write. What has gathered goes on at once when enough has, else on the next turn of the event
 * loop, so nothing waits on a slow source and the first bytes are not held back. A chunk of
 * `minBytes` or more is not copied: it follows what had gathered as a chunk of its own (the
 * response writes both in one go, as the socket is corked for the rest of the tick).
 */
export class Coalesce extends Transform {
  private parts: Buffer[] = [];
  private size = 0;
  private scheduled = false;

  constructor(private readonly minBytes = COALESCE_BYTES) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (chunk.byteLength >= this.minBytes) {
      // Large enough alone (an entry's data): goes on as it is, after what had gathered, not copied into one buffer with it.
      this.release();
      this.push(chunk);
      done();
      return;
    }
    this.parts.push(chunk);
    this.size += chunk.byteLength;
    if (this.size >= this.minBytes) this.release();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        if (!this.destroyed) this.release();
      });
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    this.release();
    done();
  }

  private release(): void {
    if (this.size === 0) return;
    const out = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    this.push(out);
  }
}
