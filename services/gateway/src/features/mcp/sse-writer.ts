import type { ServerResponse } from 'node:http';

/**
 * Writes the events of a GET stream with backpressure (docs/api/mcp.md#subscriptions). A write
 * that fills the response's buffer waits for it to drain, so a stream holds at most the socket's
 * high-water mark (16 KiB) and one event beyond what the kernel took, however many are due; and
 * the writer knows which events were flushed to the kernel (their write callbacks ran), the
 * furthest the session's stored position may move. The server cannot know more: whether the
 * client read them is what Last-Event-ID tells. While data waits and the socket takes none of it
 * for `stallMs`, the response is destroyed: its buffers go, and the client reconnects and resumes.
 */
export class SseWriter<P> {
  #pending = 0;
  #needDrain = false;
  #closed = false;
  #flushed: P | undefined;
  #progressAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #wake: (() => void)[] = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly stallMs: number,
    private readonly onStall: () => void,
  ) {
    res.once('close', () => {
      this.#closed = true;
      clearTimeout(this.#timer);
      this.#notify();
    });
    res.on('drain', () => {
      this.#needDrain = false;
      this.#notify();
    });
  }

  /** The position of the last event flushed since the last take(), if any. */
  take(): P | undefined {
    const p = this.#flushed;
    this.#flushed = undefined;
    return p;
  }

  /**
   * Writes `text` (whole SSE events); once it is flushed, `position` is the furthest one reached.
   * Resolves when the buffer has room again: false when the stream closed first.
   */
  async write(text: string, position?: P): Promise<boolean> {
    if (this.#closed) return false;
    if (this.#pending++ === 0) this.#watch();
    const room = this.res.write(text, (err) => this.#written(err ? undefined : position));
    if (!room) this.#needDrain = true;
    await this.#until(() => !this.#needDrain);
    return !this.#closed;
  }

  /** Resolves once everything written so far is flushed: false when the stream closed first. */
  async idle(): Promise<boolean> {
    await this.#until(() => this.#pending === 0);
    return !this.#closed;
  }

  #written(position: P | undefined): void {
    this.#pending--;
    this.#progressAt = Date.now();
    if (position !== undefined) this.#flushed = position;
    if (this.#pending === 0) clearTimeout(this.#timer);
    this.#notify();
  }

  /** One timer per spell of unflushed data (not one per write): it looks again while writes complete. */
  #watch(): void {
    this.#progressAt = Date.now();
    const check = () => {
      if (this.#pending === 0 || this.#closed) return;
      const quiet = Date.now() - this.#progressAt;
      if (quiet < this.stallMs) {
        this.#timer = setTimeout(check, this.stallMs - quiet);
        return;
      }
      this.onStall();
      this.res.destroy();
    };
    clearTimeout(this.#timer);
    this.#timer = setTimeout(check, this.stallMs);
  }

  async #until(ready: () => boolean): Promise<void> {
    while (!ready() && !this.#closed) await new Promise<void>((resolve) => this.#wake.push(resolve));
  }

  #notify(): void {
    for (const wake of this.#wake.splice(0)) wake();
  }
}
