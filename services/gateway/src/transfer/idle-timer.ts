import type { Readable } from 'node:stream';

/** The timer functions IdleTimer uses; tests pass fakes. */
export interface Timers {
  setTimeout: (fn: () => void, ms: number) => unknown;
  clearTimeout: (handle: never) => void;
}

const NODE_TIMERS: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle),
};

/**
 * Calls `onIdle` once `ms` pass without a `touch` while running. Stopped, it never fires; it
 * counts only the time the other side is expected to send.
 */
export class IdleTimer {
  private handle: unknown;
  private running = false;
  /** When the count last started over. A touch only moves it (one timer per `ms`, not per byte). */
  private last = 0;

  constructor(
    private readonly ms: number,
    private readonly onIdle: () => void,
    private readonly timers: Timers = NODE_TIMERS,
  ) {}

  /** Starts counting afresh (or again, after `stop`). */
  start(): void {
    this.running = true;
    this.last = Date.now();
    this.arm(this.ms);
  }

  /** A byte arrived: the count starts over. Does nothing while stopped. */
  touch(): void {
    if (this.running) this.last = Date.now();
  }

  stop(): void {
    this.running = false;
    this.disarm();
  }

  private arm(ms: number): void {
    this.disarm();
    this.handle = this.timers.setTimeout(() => {
      this.handle = undefined;
      const quiet = Date.now() - this.last;
      if (quiet < this.ms) return this.arm(this.ms - quiet);
      this.running = false;
      this.onIdle();
    }, ms);
  }

  private disarm(): void {
    if (this.handle !== undefined) this.timers.clearTimeout(this.handle as never);
    this.handle = undefined;
  }
}

/**
 * Calls `onIdle` when `stream` goes `ms` without a byte while it flows. Time it spends paused
 * is our backpressure (a part upload or a slow reader downstream), not a stall of the sender,
 * so it does not count. Attach only once the stream is being consumed (piped or read): the
 * 'data' listener added here must not be what starts it flowing. Returns `unwatch`.
 */
export function watchIdle(stream: Readable, ms: number, onIdle: () => void, timers?: Timers): () => void {
  const timer = new IdleTimer(
    ms,
    () => {
      // 'resume' is emitted a tick after resume(), so a pause in between leaves a stale
      // 'resume' behind: ask the stream whether it really flows before calling it a stall.
      if (stream.readableFlowing === true) onIdle();
    },
    timers,
  );
  const touch = () => timer.touch();
  const start = () => timer.start();
  const stop = () => timer.stop();
  stream.on('data', touch).on('resume', start).on('pause', stop).once('end', stop).once('close', stop);
  if (stream.readableFlowing === true) timer.start();
  return () => {
    timer.stop();
    stream.off('data', touch).off('resume', start).off('pause', stop).off('end', stop).off('close', stop);
  };
}
