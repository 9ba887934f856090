/**
 * The bytes of one upload part, gathered from the chunks the client sends. Its storage starts
 * at the first chunk's size and doubles as bytes arrive, up to `capacity` and never beyond, so
 * a 4 KiB file costs about 4 KiB, not a whole part. Storage is kept across `reset`: a buffer
 * whose part was sent takes the next one without a new allocation.
 */
export class PartBuffer {
  private storage = Buffer.alloc(0);
  private used = 0;

  /** `whole`: allocate the full capacity at the first byte (a part known to fill up). */
  constructor(
    readonly capacity: number,
    private readonly options: { whole?: boolean } = {},
  ) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`part capacity must be a positive integer, got ${capacity}`);
  }

  get length(): number {
    return this.used;
  }

  get full(): boolean {
    return this.used === this.capacity;
  }

  /** Bytes allocated (for tests and metrics): at most `capacity`. */
  get allocated(): number {
    return this.storage.length;
  }

  /** Copies as much of `chunk` (from `offset`) as fits and returns how many bytes it took. */
  fill(chunk: Uint8Array, offset = 0): number {
    const take = Math.min(chunk.length - offset, this.capacity - this.used);
    if (take <= 0) return 0;
    this.reserve(this.used + take);
    this.storage.set(chunk.subarray(offset, offset + take), this.used);
    this.used += take;
    return take;
  }

  /** A view of the bytes gathered so far; valid until the next `fill` or `reset`. */
  bytes(): Buffer {
    return this.storage.subarray(0, this.used);
  }

  reset(): void {
    this.used = 0;
  }

  private reserve(needed: number): void {
    if (needed <= this.storage.length) return;
    const size = this.options.whole ? this.capacity : Math.min(this.capacity, Math.max(needed, this.storage.length * 2));
    // allocUnsafe: every byte handed out by bytes() was written by fill() first.
    const grown = Buffer.allocUnsafe(size);
    this.storage.copy(grown, 0, 0, this.used);
    this.storage = grown;
  }
}
