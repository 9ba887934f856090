import { createHash } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { errors, isTextSummary, mayContain, summarize, summaryBytesAtMost, type Logger } from '@workspace/platform';
import type { Cursors } from './cursors.js';
import type { IndexEntry } from './entries.js';
import { globMatcher } from '@workspace/platform';
import { compileQuery, type CompiledQuery, type LineMatch, type QuerySpec } from './matcher.js';
import { baseName, parsePath, ROOT, type WorkspacePath } from './paths.js';
import type { BlobStore, ContentSummaries, FileIndex, TextMatcher } from './ports.js';

/** Matches per page (docs/api/files.md#search): 100 unless asked, at most 1,000. */
export const DEFAULT_SEARCH_LIMIT = 100;
export const MAX_SEARCH_LIMIT = 1_000;
/** Index entries read per step of the listing. */
const LIST_STEP = 1_000;
/**
 * Attempts at an answer from one state of the tree: the listing is read in steps, and when the
 * tree changed between two of them the search starts again; the last attempt lists in one step.
 */
const ATTEMPTS = 3;
const ONE_STEP = 10_000_000;
/** Thrown inside an attempt whose listing saw the tree change. */
const CHANGED = Symbol('the tree changed');
/** An answer's wall time is bounded at this many times SEARCH_BUDGET_MS (reads and waits included). */
export const WALL_FACTOR = 3;
/**
 * Files whose summaries are fetched together; the first steps are small, so a short answer reads
 * little. A batch also stops at SUMMARY_BATCH_BYTES of summaries at most (bounded by the files'
 * sizes: summaryBytesAtMost), so a tree of large text files does not fetch 1,024 × 64 KiB at once.
 */
const FIRST_BATCH = 16;
const MAX_BATCH = 1_024;
const SUMMARY_BATCH_BYTES = 4 * 1024 * 1024;
/** The longest a search runs without letting the service serve others (ms): a glob's test of many paths is CPU work. */
const SLICE_MS = 20;
/** Committed files waiting to be summarized in the background, and summarized at once (per replica). */
const WARM_PENDING = 10_000;
const WARM_CONCURRENCY = 4;

export interface SearchInput {
  path: string;
  q: string;
  regex: boolean;
  caseSensitive: boolean;
  glob: string;
  /** 0 = the default. */
  limit: number;
  cursor: string;
}

export interface SearchMatch {
  path: string;
  line: number;
  column: number;
  text: string;
  sha256: string;
}

export interface SearchResult {
  path: string;
  matches: SearchMatch[];
  /** Undefined on the last page. */
  cursor: string | undefined;
  filesSearched: number;
}

/** Where a page ended: the last match returned (the next page starts after it). */
type Position = [path: string, line: number, column: number];

interface Candidate {
  path: string;
  entry: IndexEntry;
}

export interface SearchOptions {
  index: FileIndex;
  blobs: BlobStore;
  summaries: ContentSummaries;
  cursors: Cursors;
  logger: Logger;
  /** Where the texts are matched: off the event loop. */
  matcher: TextMatcher;
  /** SEARCH_BUDGET_MS: the matching time one answer may take; past it 422 SEARCH_TOO_EXPENSIVE. */
  budgetMs: number;
  /** Files larger than this are not searched (SEARCH_MAX_FILE_BYTES). */
  maxFileBytes: number;
  /** Objects read from the store at once per search. */
  concurrency?: number;
}

/**
 * Exact content search (docs/api/files.md#search). The files come from the metadata index as it
 * is when the request runs (so every committed write is seen), every step of the listing from one
 * state of the tree; trigram summaries rule out the files that cannot match, and every other file
 * is read from the store and matched exactly, in the matcher's workers, within the budget.
 */
export class Search {
  readonly #o: Required<SearchOptions>;
  readonly #warming = new Map<string, { userId: string; path: string }>();
  #warmers = 0;

  constructor(options: SearchOptions) {
    this.#o = { concurrency: 16, ...options };
  }

  async search(userId: string, input: SearchInput, signal?: AbortSignal): Promise<SearchResult> {
    const scope = parsePath(input.path === '' ? ROOT : input.path);
    const limit = input.limit === 0 ? DEFAULT_SEARCH_LIMIT : input.limit;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) throw errors.invalidArgument(`limit must be 1 to ${MAX_SEARCH_LIMIT}`, 'limit');
    const query = compileQuery(input.q, input.regex, input.caseSensitive);
    const included = globMatcher(input.glob);
    const cursorScope = `search:${createHash('sha256').update(JSON.stringify([scope.path, input.q, input.regex, input.caseSensitive, input.glob])).digest('base64url')}`;
    const after = input.cursor === '' ? undefined : parsePosition(this.#o.cursors.verify(userId, cursorScope, input.cursor));
    const spec: QuerySpec = { q: input.q, regex: input.regex, caseSensitive: input.caseSensitive };
    const budget = { spentMs: 0 };
    // Reads and waits for a worker count too, within a bound of their own: no answer outlasts the caller's deadline.
    const wall = AbortSignal.timeout(this.#o.budgetMs * WALL_FACTOR);
    const stop = signal ? AbortSignal.any([signal, wall]) : wall;
    try {
      return await this.#answer({ userId, query, spec, after, signal: stop, budget }, { scope, limit, included, cursorScope });
    } catch (err) {
      if (wall.aborted && !signal?.aborted) throw errors.searchTooExpensive(this.#o.budgetMs);
      throw err;
    }
  }

  /** The answer from one state of the tree: attempts until a listing saw no change (the last lists in one step). */
  async #answer(base: Omit<Run, 'want' | 'matches' | 'filesSearched'>, page: Page): Promise<SearchResult> {
    const { userId, after } = base;
    const { scope, limit, included, cursorScope } = page;
    for (let attempt = 1; ; attempt++) {
      const run: Run = { ...base, want: limit + 1, matches: [], filesSearched: 0 };
      const rel = (path: string) => (path === scope.path ? baseName(scope) : path.slice(scope.path.length + 1));
      try {
        await this.#attempt(run, this.#files(userId, scope.path, after?.[0], attempt < ATTEMPTS ? LIST_STEP : ONE_STEP), (file) => file.entry.size <= this.#o.maxFileBytes && included(rel(file.path)));
      } catch (err) {
        if (err === CHANGED) continue;
        throw err;
      }
      const more = run.matches.length > limit;
      const matches = run.matches.slice(0, limit);
      const last = matches.at(-1);
      const cursor = more && last ? this.#o.cursors.sign(userId, cursorScope, JSON.stringify([last.path, last.line, last.column])) : undefined;
      return { path: scope.path, matches, cursor, filesSearched: run.filesSearched };
    }
  }

  /** One pass over the candidates, in batches that grow; CHANGED when the listing saw the tree change. */
  async #attempt(run: Run, files: AsyncGenerator<Candidate>, wanted: (file: Candidate) => boolean): Promise<void> {
    let batch: Candidate[] = [];
    let size = FIRST_BATCH;
    let summaryBytes = 0;
    let slice = performance.now();
    for await (const file of files) {
      if (performance.now() - slice > SLICE_MS) {
        await nextTurn();
        // A caller that gave up (or whose deadline passed) gets no answer: stop the work.
        run.signal?.throwIfAborted();
        slice = performance.now();
      }
      if (!wanted(file)) continue;
      batch.push(file);
      summaryBytes += summaryBytesAtMost(file.entry.size);
      if (batch.length < size && summaryBytes < SUMMARY_BATCH_BYTES) continue;
      if (await this.#scan(run, batch)) return;
      batch = [];
      summaryBytes = 0;
      size = Math.min(MAX_BATCH, size * 2);
    }
    if (batch.length > 0) await this.#scan(run, batch);
  }

  /**
   * The files at or below `path` in byte order, from `from` on (inclusive), as the index holds them
   * now, `step` entries a read: every read must show the tree at the version of the first, else
   * the generator throws CHANGED (a move between two reads would show both trees, or neither).
   */
  async *#files(userId: string, path: string, from: string | undefined, step: number): AsyncGenerator<Candidate> {
    let after = '';
    let version: string | undefined;
    for (;;) {
      const page = await this.#o.index.list(userId, { path, recursive: true, after, limit: step, ...(after === '' && from !== undefined && from !== path ? { from } : {}) });
      if (page.kind === 'file') {
        if (after === '') yield { path, entry: page.entry };
        return;
      }
      version ??= page.version;
      if (page.version !== version) throw CHANGED;
      for (const e of page.entries) if (e.entry) yield { path: e.path, entry: e.entry };
      if (!page.more) return;
      after = page.entries.at(-1)!.path;
    }
  }

  /** Matches a batch in order, reading the candidates a few at a time. True when enough matches were found. */
  async #scan(run: Run, batch: Candidate[]): Promise<boolean> {
    const summaries = await this.#o.summaries.get(run.userId, batch.map((f) => f.entry.key));
    const reads = new Map<number, Promise<Buffer | undefined>>();
    // Copies, forks and restores share their bytes: one read per object.
    const byKey = new Map<string, Promise<Buffer | undefined>>();
    let nextRead = 0;
    const readAhead = (upTo: number) => {
      for (; nextRead < batch.length && nextRead <= upTo; nextRead++) {
        const { entry } = batch[nextRead]!;
        if (summaries[nextRead] !== undefined && !needsRead(summaries[nextRead]!, run.query, entry)) continue;
        let read = byKey.get(entry.key);
        if (!read) byKey.set(entry.key, (read = this.#text(run.userId, entry, summaries[nextRead], run.signal)));
        reads.set(nextRead, read);
      }
    };
    try {
      for (let i = 0; i < batch.length; i++) {
        readAhead(i + this.#o.concurrency - 1);
        const summary = summaries[i];
        if (summary !== undefined && !isTextSummary(summary)) continue;
        // Not read: a summary ruled it out (it cannot match, but was examined), or it is empty.
        const bytes = reads.has(i) ? await reads.get(i) : EMPTY;
        if (bytes === undefined) continue; // not valid UTF-8
        run.filesSearched++;
        if (bytes.length === 0 && (batch[i]!.entry.size > 0 || run.query.trigrams.length > 0)) continue;
        const { path, entry } = batch[i]!;
        const after: [number, number] = run.after && run.after[0] === path ? [run.after[1], run.after[2]] : [0, 0];
        for (const m of await this.#match(run, bytes, after)) run.matches.push({ path, ...m, sha256: entry.sha256 });
        if (run.matches.length >= run.want) return true;
      }
      return false;
    } finally {
      // Reads started past the point where enough was found are left to settle on their own.
      for (const read of reads.values()) read.catch(() => undefined);
    }
  }

  /** The matches of one text: an empty one (one empty line) here, any other in the matcher, within the budget. */
  async #match(run: Run, bytes: Buffer, after: [number, number]): Promise<LineMatch[]> {
    const max = run.want - run.matches.length;
    if (bytes.length === 0) return run.query.matches('', after, max);
    const outcome = await this.#o.matcher.match({ query: run.spec, bytes, after, max }, { owner: run.userId, timeLeftMs: this.#o.budgetMs - run.budget.spentMs, signal: run.signal });
    run.budget.spentMs += outcome.ms;
    if (outcome.overBudget) throw errors.searchTooExpensive(this.#o.budgetMs);
    return outcome.matches;
  }

  /**
   * Summarizes a file just committed, in the background, so the next search can rule it out
   * without reading it. Best effort: at most WARM_PENDING wait (more are left to the first
   * search that reads them), a few at a time; a failure only means the search reads the file.
   */
  warm(userId: string, path: string): void {
    if (this.#warming.size >= WARM_PENDING) return;
    this.#warming.set(`${userId}\0${path}`, { userId, path });
    this.#drain();
  }

  #drain(): void {
    while (this.#warmers < WARM_CONCURRENCY && this.#warming.size > 0) {
      const [id, job] = this.#warming.entries().next().value!;
      this.#warming.delete(id);
      this.#warmers++;
      this.#warmOne(job.userId, job.path)
        .catch((err: unknown) => this.#o.logger.debug({ err }, 'could not summarize a committed file'))
        .finally(() => {
          this.#warmers--;
          this.#drain();
        });
    }
  }

  async #warmOne(userId: string, path: string): Promise<void> {
    const [entry] = await this.#o.index.stat(userId, [path]);
    if (!entry || entry === 'directory' || entry.size > this.#o.maxFileBytes) return;
    const [summary] = await this.#o.summaries.get(userId, [entry.key]);
    if (summary === undefined) await this.#text(userId, entry, undefined);
  }

  /** The content's bytes, or undefined when they are not valid UTF-8; summarizes them when they had no summary. */
  async #text(userId: string, entry: IndexEntry, summary: Uint8Array | undefined, signal?: AbortSignal): Promise<Buffer | undefined> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.#o.blobs.read(entry.key, { signal })) chunks.push(Buffer.from(chunk));
    const bytes = Buffer.concat(chunks);
    const text = isUtf8(bytes);
    if (summary === undefined) {
      await this.#o.summaries.put(userId, entry.key, summarize(bytes, text)).catch((err: unknown) => this.#o.logger.warn({ err }, 'could not store a content summary'));
    }
    return text ? bytes : undefined;
  }
}

const EMPTY = Buffer.alloc(0);

/** What an answer is a page of: the folder searched, the page's size, the files included, the cursors' scope. */
interface Page {
  scope: WorkspacePath;
  limit: number;
  included: (rel: string) => boolean;
  cursorScope: string;
}

interface Run {
  userId: string;
  query: CompiledQuery;
  spec: QuerySpec;
  /** limit + 1: one more than a page tells whether another page follows. */
  want: number;
  matches: SearchMatch[];
  filesSearched: number;
  after: Position | undefined;
  signal: AbortSignal | undefined;
  /** The matching time spent, over every attempt. */
  budget: { spentMs: number };
}

/** Whether a summarized text file must be read: it is not empty and may hold every trigram. */
function needsRead(summary: Uint8Array, query: CompiledQuery, entry: IndexEntry): boolean {
  return isTextSummary(summary) && entry.size > 0 && mayContain(summary, query.trigrams);
}

function parsePosition(raw: string): Position {
  const value = JSON.parse(raw) as unknown;
  if (!Array.isArray(value) || typeof value[0] !== 'string' || !Number.isInteger(value[1]) || !Number.isInteger(value[2])) throw errors.invalidArgument('the cursor is not valid for this request', 'cursor');
  return value as Position;
}
