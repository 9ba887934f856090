import { Worker } from 'node:worker_threads';
import { errors, type Logger } from '@workspace/platform';
import type { LineMatch, QuerySpec } from '../domain/matcher.js';
import type { MatchJob, MatchOutcome, TextMatcher } from '../domain/ports.js';

/** What the pool sends a worker. */
export interface MatchRequest {
  id: number;
  query: QuerySpec;
  bytes: Uint8Array;
  after: readonly [number, number];
  max: number;
}

/** What a worker answers: the matches, or why it could not (a bug: the query was checked). */
export type MatchReply = { id: number; matches: LineMatch[] } | { id: number; error: string };

export interface MatchPoolOptions {
  /** SEARCH_WORKERS: texts matched at once, each in a worker thread of its own. */
  size: number;
  logger: Logger;
  /** The worker's script (tests point it at the build). */
  workerUrl?: URL;
}

interface Job {
  job: MatchJob;
  owner: string;
  timeLeftMs: number;
  signal: AbortSignal | undefined;
  resolve(outcome: MatchOutcome): void;
  reject(err: unknown): void;
  onAbort?: () => void;
}

/**
 * The search's matching in worker threads (docs/api/files.md#search): the files service's event
 * loop never runs a pattern. Jobs wait in one queue per owner and the free workers take the
 * owners in turn, so one user's searches cannot keep another's waiting behind all of theirs. A
 * job past its time, or whose caller went away, has its worker terminated at once (a pattern
 * cannot be interrupted otherwise) and a new one started in its place.
 */
export class MatchPool implements TextMatcher {
  readonly #o: Required<MatchPoolOptions>;
  readonly #idle: Worker[] = [];
  /** Every worker, idle or busy, so that close() stops them all. */
  readonly #all = new Set<Worker>();
  readonly #queues = new Map<string, Job[]>();
  #nextId = 1;
  #closed = false;

  constructor(options: MatchPoolOptions) {
    this.#o = { workerUrl: new URL('./match.worker.js', import.meta.url), ...options };
  }

  match(job: MatchJob, options: { owner: string; timeLeftMs: number; signal?: AbortSignal | undefined }): Promise<MatchOutcome> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (options.timeLeftMs <= 0) return Promise.resolve({ overBudget: true, ms: 0 });
    return new Promise<MatchOutcome>((resolve, reject) => {
      const queued: Job = { job, owner: options.owner, timeLeftMs: options.timeLeftMs, signal, resolve, reject };
      queued.onAbort = () => this.#dequeue(queued) && reject(signal!.reason);
      signal?.addEventListener('abort', queued.onAbort, { once: true });
      const queue = this.#queues.get(queued.owner);
      if (queue) queue.push(queued);
      else this.#queues.set(queued.owner, [queued]);
      this.#dispatch();
    });
  }

  /** Stops every worker; jobs waiting or running fail as UNAVAILABLE. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const queue of this.#queues.values()) for (const job of queue) this.#settle(job, () => job.reject(errors.unavailable('the search')));
    this.#queues.clear();
    this.#idle.length = 0;
    // A job running now fails with its worker (onExit).
    await Promise.all([...this.#all].map((w) => w.terminate()));
  }

  /** Removes a job that is still waiting; false when it already runs. */
  #dequeue(job: Job): boolean {
    const queue = this.#queues.get(job.owner);
    const at = queue?.indexOf(job) ?? -1;
    if (at < 0) return false;
    queue!.splice(at, 1);
    if (queue!.length === 0) this.#queues.delete(job.owner);
    return true;
  }

  #dispatch(): void {
    while (!this.#closed && this.#queues.size > 0 && (this.#idle.length > 0 || this.#all.size < this.#o.size)) {
      // The owner waiting longest goes first and, with more to do, to the back of the line.
      const [owner, queue] = this.#queues.entries().next().value!;
      const job = queue.shift()!;
      this.#queues.delete(owner);
      if (queue.length > 0) this.#queues.set(owner, queue);
      this.#run(this.#idle.pop() ?? this.#spawn(), job);
    }
  }

  #spawn(): Worker {
    const worker = new Worker(this.#o.workerUrl, { stdout: false, stderr: false });
    this.#all.add(worker);
    // An idle worker does not keep the process alive.
    worker.unref();
    return worker;
  }

  #run(worker: Worker, queued: Job): void {
    const { job, signal } = queued;
    const id = this.#nextId++;
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    const finish = (keep: boolean, settle: () => void) => {
      clearTimeout(timer);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      if (signal && queued.onAbort) signal.removeEventListener('abort', onAbort);
      if (keep && !this.#closed) this.#idle.push(worker);
      else this.#retire(worker);
      settle();
      this.#dispatch();
    };
    const onMessage = (reply: MatchReply) => {
      if (reply.id !== id) return;
      if ('error' in reply) finish(true, () => queued.reject(errors.internal(new Error(`matching failed: ${reply.error}`))));
      else finish(true, () => queued.resolve({ overBudget: false, matches: reply.matches, ms: elapsed() }));
    };
    const onError = (err: Error) => finish(false, () => queued.reject(errors.internal(err)));
    const onExit = (code: number) => finish(false, () => queued.reject(this.#closed ? errors.unavailable('the search') : errors.internal(new Error(`a matching worker exited (${code})`))));
    const onAbort = () => finish(false, () => queued.reject(signal!.reason));
    const timer = setTimeout(() => finish(false, () => queued.resolve({ overBudget: true, ms: elapsed() })), Math.ceil(queued.timeLeftMs));
    if (signal) {
      signal.removeEventListener('abort', queued.onAbort!);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    // Copied to the worker (a MiB takes a fraction of a millisecond): the caller may match the same bytes again.
    const request: MatchRequest = { id, query: job.query, bytes: job.bytes, after: job.after, max: job.max };
    worker.postMessage(request);
  }

  /** A worker that was stopped mid-pattern, failed or is not needed: gone, and counted out. */
  #retire(worker: Worker): void {
    this.#all.delete(worker);
    worker.terminate().catch((err: unknown) => this.#o.logger.warn({ err }, 'a matching worker did not stop'));
  }

  #settle(job: Job, settle: () => void): void {
    if (job.signal && job.onAbort) job.signal.removeEventListener('abort', job.onAbort);
    settle();
  }
}
