import { errors } from '@workspace/platform';
import type { Cursors } from './cursors.js';
import { parsePath, ROOT } from './paths.js';
import type { ChangesLog, LoggedChange } from './ports.js';

export const MAX_CHANGES = 10_000;
export const MAX_WAIT_MS = 60_000;
/** Changes read from the log per step while looking for ones under the cursor's path. */
const SCAN_STEP = 1_000;
/** A call gives up scanning after this many changes that are not under its path (and says hasMore). */
const SCAN_BUDGET = 50_000;

/** A change as the API shows it (docs/api/files.md#changes). */
export interface Change {
  type: 'created' | 'updated' | 'deleted' | 'moved' | 'rewound';
  kind: 'file' | 'directory';
  path: string;
  from?: string;
  at: string;
  size?: number;
  sha256?: string;
}

/**
 * The changes feed of one user's workspace (docs/api/files.md#changes): a position in the user's
 * log, scoped to a path. Every committed change appears once after any cursor taken before it, in
 * commit order, because the log is appended in the same atomic step as the change.
 */
export class Changes {
  readonly #log: ChangesLog;
  readonly #cursors: Cursors;

  constructor(options: { log: ChangesLog; cursors: Cursors }) {
    this.#log = options.log;
    this.#cursors = options.cursors;
  }

  /** The position after the latest change, for changes at or below `rawPath`. */
  async cursor(userId: string, rawPath: string): Promise<string> {
    const path = parsePath(rawPath).path;
    return this.#cursors.sign(userId, `changes:${path}`, await this.#log.latest(userId));
  }

  async read(userId: string, token: string, limit: number, waitMs: number, signal?: AbortSignal): Promise<{ changes: Change[]; cursor: string; hasMore: boolean }> {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_CHANGES) throw errors.invalidArgument(`limit must be 1 to ${MAX_CHANGES}`, 'limit');
    if (!Number.isInteger(waitMs) || waitMs < 0 || waitMs > MAX_WAIT_MS) throw errors.invalidArgument('timeout must be 0 to 60 seconds', 'timeout');
    const { path, position } = this.#decode(userId, token);
    const expired = async () => {
      if (await this.#log.expired(userId, position)) throw errors.cursorExpired();
    };
    await expired();
    const deadline = Date.now() + waitMs;
    const scope = `changes:${path}`;
    const changes: Change[] = [];
    let after = position;
    for (let scanned = 0; ; ) {
      const wait = changes.length === 0 ? Math.max(0, deadline - Date.now()) : 0;
      const batch = await this.#log.read(userId, after, SCAN_STEP, wait, signal);
      let i = 0;
      for (; i < batch.length && changes.length < limit; i++) {
        const seen = scoped(batch[i]!, path);
        if (seen) changes.push(seen);
        after = batch[i]!.id;
      }
      scanned += i;
      const caughtUp = i === batch.length && batch.length < SCAN_STEP;
      const done = changes.length === limit || scanned >= SCAN_BUDGET || (caughtUp && (changes.length > 0 || Date.now() >= deadline)) || signal?.aborted;
      if (done) {
        // Again after reading: history trimmed between the first check and the read was skipped.
        await expired();
        return { changes, cursor: this.#cursors.sign(userId, scope, after), hasMore: !caughtUp };
      }
    }
  }

  #decode(userId: string, token: string): { path: string; position: string } {
    const dot = token.indexOf('.');
    let scope: unknown;
    try {
      scope = (JSON.parse(Buffer.from(token.slice(0, Math.max(dot, 0)), 'base64url').toString('utf8')) as unknown[])[0];
    } catch {
      throw errors.invalidArgument('the cursor is not valid for this request', 'cursor');
    }
    if (typeof scope !== 'string' || !scope.startsWith('changes:')) throw errors.invalidArgument('the cursor is not valid for this request', 'cursor');
    return { path: scope.slice('changes:'.length), position: this.#cursors.verify(userId, scope, token) };
  }
}

function within(p: string, dir: string): boolean {
  return dir === ROOT || p === dir || p.startsWith(`${dir}/`);
}

/** How a change looks from a cursor on `dir`, or undefined when it is not seen there. */
export function scoped(c: LoggedChange, dir: string): Change | undefined {
  const base = { kind: c.kind, at: new Date(c.at).toISOString() };
  const content = c.kind === 'file' && c.size !== undefined ? { size: c.size, sha256: c.sha256 ?? '' } : {};
  if (c.type === 'moved') {
    const into = within(c.path, dir);
    const outOf = c.from !== undefined && (within(c.from, dir) || within(dir, c.from));
    if (into && outOf) return { type: 'moved', ...base, path: c.path, from: c.from! };
    if (into) return { type: 'created', ...base, path: c.path, ...content };
    // A directory moved into the place of the path (or above it): what it brought is new there.
    if (c.kind === 'directory' && within(dir, c.path) && dir !== c.path) return { type: 'created', ...base, path: dir };
    if (outOf) return { type: 'deleted', ...base, path: within(dir, c.from!) && dir !== c.from ? dir : c.from! };
    return undefined;
  }
  if (within(c.path, dir)) return { type: c.type, ...base, path: c.path, ...(c.type === 'deleted' ? {} : content) };
  // A rewind of a folder above the path (docs/api/files.md#rewind): the path's tree may have changed whole.
  if (c.type === 'rewound' && within(dir, c.path)) return { type: 'rewound', ...base, kind: 'directory', path: dir };
  // The directory holding the cursor's path was deleted: so was the path.
  if (c.type === 'deleted' && within(dir, c.path)) return { type: 'deleted', ...base, kind: 'directory', path: dir };
  // A directory copied over the path's place: whatever it brought there is new (the client lists it).
  if (c.type === 'created' && c.kind === 'directory' && within(dir, c.path)) return { type: 'created', ...base, path: dir };
  return undefined;
}
