import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IdleTimer, watchIdle } from './idle-timer.js';

describe('idle timer', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('idle timer — fires once after ms without a touch, and a touch starts the count over', () => {
    const onIdle = vi.fn();
    const timer = new IdleTimer(1000, onIdle);
    timer.start();
    vi.advanceTimersByTime(900);
    timer.touch();
    vi.advanceTimersByTime(900);
    expect(onIdle).not.toHaveBeenCalled();
    vi.advanceTimersByTime(100);
    expect(onIdle).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(10_000);
    expect(onIdle).toHaveBeenCalledTimes(1);
  });

  it('idle timer — stopped, it never fires and touches do not restart it', () => {
    const onIdle = vi.fn();
    const timer = new IdleTimer(1000, onIdle);
    timer.start();
    timer.stop();
    timer.touch();
    vi.advanceTimersByTime(5000);
    expect(onIdle).not.toHaveBeenCalled();
    timer.start();
    vi.advanceTimersByTime(1000);
    expect(onIdle).toHaveBeenCalledTimes(1);
  });

  it('watch idle — a flowing stream that sends nothing is a stall; bytes keep it alive', async () => {
    const source = new PassThrough();
    source.pipe(new Writable({ write: (_c, _e, cb) => cb() }));
    const onIdle = vi.fn();
    watchIdle(source, 1000, onIdle);
    await vi.advanceTimersByTimeAsync(800);
    source.write('x');
    await vi.advanceTimersByTimeAsync(800);
    expect(onIdle).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(300);
    expect(onIdle).toHaveBeenCalledTimes(1);
  });

  it('watch idle — time held back by backpressure does not count; it counts again once reading resumes', async () => {
    const source = new PassThrough({ highWaterMark: 4 });
    let release: (() => void) | undefined;
    source.pipe(new Writable({ highWaterMark: 1, write: (_c, _e, cb) => void (release = cb) }));
    const onIdle = vi.fn();
    watchIdle(source, 1000, onIdle);
    source.write('abcdefgh'); // the writer holds it: the source is paused
    await vi.advanceTimersByTimeAsync(5000);
    expect(source.readableFlowing).toBe(false);
    expect(onIdle).not.toHaveBeenCalled();
    release?.();
    await vi.advanceTimersByTimeAsync(999);
    expect(onIdle).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(onIdle).toHaveBeenCalledTimes(1);
  });

  it('watch idle — an ended stream is not a stall, and unwatch stops watching', async () => {
    const ended = new PassThrough();
    ended.pipe(new Writable({ write: (_c, _e, cb) => cb() }));
    const onEnded = vi.fn();
    watchIdle(ended, 1000, onEnded);
    ended.end('last');
    await vi.advanceTimersByTimeAsync(5000);
    expect(onEnded).not.toHaveBeenCalled();

    const open = new PassThrough();
    open.pipe(new Writable({ write: (_c, _e, cb) => cb() }));
    const onOpen = vi.fn();
    watchIdle(open, 1000, onOpen)();
    await vi.advanceTimersByTimeAsync(5000);
    expect(onOpen).not.toHaveBeenCalled();
  });
});
