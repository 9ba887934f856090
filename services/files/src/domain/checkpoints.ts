import { randomBytes } from 'node:crypto';
import { errors } from '@workspace/platform';
import { eventTemplate } from './events.js';
import { parsePath, ROOT } from './paths.js';
import type { CheckpointIndex, ConflictMode, PastState, StoredCheckpoint } from './ports.js';
import { checkSha256 } from './preconditions.js';
import { uuidSibling } from './workspace.js';

/** A checkpoint as the API shows it (docs/api/files.md#checkpoints). */
export interface CheckpointInfo {
  checkpointId: string;
  path: string;
  label: string;
  createdAt: string;
  files: number;
  bytes: number;
}

export interface RewindResult {
  path: string;
  to: string;
  restored: number;
  removed: number;
  unchanged: number;
  checkpointId: string;
}

export const MAX_LABEL = 200;
const CHECKPOINT_ID = /^ckp_[0-9a-f]{32}$/;
/** ISO 8601 date and time with a zone (Z or ±hh:mm), seconds and fractions optional. */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-](\d{2}):?(\d{2}))$/i;

/**
 * The time `value` names, or NaN. Date.parse rolls a day or an hour past its end over into the
 * next (30 February is 1 March, 24:00 the next day): a time that is no date of the calendar
 * would rewind to another one, so each field is held to its range first.
 */
function isoTime(value: string): number {
  const m = ISO_TIME.exec(value);
  if (!m) return Number.NaN;
  // Absent seconds and zone (Z) count as 0.
  const [year, month, day, hour, minute, second, zoneHours, zoneMinutes] = [1, 2, 3, 4, 5, 6, 9, 10].map((i) => Number(m[i] ?? 0)) as [number, number, number, number, number, number, number, number];
  // setUTCFullYear, not Date.UTC: Date.UTC reads the years 0–99 as 1900–1999 (0000 is a leap year, 1900 is not).
  const lastDay = new Date(0);
  lastDay.setUTCFullYear(year, month, 0);
  const daysInMonth = lastDay.getUTCDate();
  const inRange = month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59 && zoneHours <= 23 && zoneMinutes <= 59;
  return inRange ? Date.parse(value) : Number.NaN;
}

export function newCheckpointId(): string {
  return `ckp_${randomBytes(16).toString('hex')}`;
}

/**
 * Checkpoints, rewind and fork (docs/api/files.md#checkpoints): named states of a tree, and the
 * way back to one of them or to a time within the retained history. The index does the work in
 * one atomic step each; here are the rules of the arguments.
 */
export class Checkpoints {
  readonly #index: CheckpointIndex;
  readonly #max: number;
  readonly #retentionMs: number;
  readonly #now: () => number;

  constructor(options: { index: CheckpointIndex; maxCheckpoints: number; retentionMs: number; clock?: () => number }) {
    this.#index = options.index;
    this.#max = options.maxCheckpoints;
    this.#retentionMs = options.retentionMs;
    this.#now = options.clock ?? Date.now;
  }

  async create(userId: string, rawPath: string, label: string): Promise<CheckpointInfo> {
    const path = parsePath(rawPath);
    checkLabel(label);
    return info(await this.#index.create(userId, { checkpointId: newCheckpointId(), path: path.path, label, max: this.#max }));
  }

  async get(userId: string, checkpointId: string): Promise<CheckpointInfo> {
    const found = CHECKPOINT_ID.test(checkpointId) ? await this.#index.get(userId, checkpointId) : undefined;
    if (!found) throw errors.notFound('checkpoint', checkpointId);
    return info(found);
  }

  async list(userId: string, rawPath: string): Promise<CheckpointInfo[]> {
    const path = parsePath(rawPath);
    return (await this.#index.list(userId, path.path)).map(info);
  }

  async delete(userId: string, checkpointId: string): Promise<void> {
    if (!CHECKPOINT_ID.test(checkpointId) || !(await this.#index.delete(userId, checkpointId))) throw errors.notFound('checkpoint', checkpointId);
  }

  /** The tree at `path` becomes what it was at `to` (a checkpoint id or a time), after a checkpoint of it as it is. */
  async rewind(userId: string, rawPath: string, to: string): Promise<RewindResult> {
    const path = parsePath(rawPath);
    const state = this.#state(to, 'to');
    const checkpointId = newCheckpointId();
    const label = `before rewind to ${to}`.slice(0, MAX_LABEL);
    const done = await this.#index.rewind(userId, { path: path.path, state, checkpointId, label, max: this.#max, event: eventTemplate(userId, path.path), to });
    if (done.notCovered) throw errors.invalidArgument(`the checkpoint ${to} was not taken at ${path.path} or above it`, 'to');
    return { path: path.path, to, restored: done.restored, removed: done.removed, unchanged: done.unchanged, checkpointId };
  }

  /** A copy of the tree at `from` as it was at `at` (docs/api/files.md#fork); `from` need not exist now. */
  async fork(userId: string, input: { from: string; to: string; onConflict: ConflictMode; at: string; ifMatch?: string | undefined; ifMatchTo?: string | undefined }): Promise<{ from: string; path: string }> {
    const from = parsePath(input.from);
    const to = parsePath(input.to);
    if (from.segments.length === 0) throw errors.invalidPath('the workspace root cannot be copied', ROOT);
    if (to.segments.length === 0) throw errors.invalidPath('the destination cannot be the workspace root', ROOT);
    if (to.path === from.path || to.path.startsWith(`${from.path}/`)) throw errors.invalidPath('the destination cannot be the source or lie below it', to.path);
    // A fork is a copy: its conditions are a copy's, on the files at `from` and `to` now.
    const ifMatch = checkSha256(input.ifMatch, 'If-Match');
    const ifMatchTo = checkSha256(input.ifMatchTo, 'ifMatchTo');
    const state = this.#state(input.at, 'at');
    const done = await this.#index.fork(userId, { from: from.path, to: to.path, mode: input.onConflict, uuidPath: uuidSibling(to), state, event: eventTemplate(userId, to.path), ifMatch, ifMatchTo });
    if (done.notCovered) throw errors.invalidArgument(`the checkpoint ${input.at} was not taken at ${from.path} or above it`, 'at');
    return { from: from.path, path: done.path };
  }

  async usage(userId: string): Promise<{ count: number; bytes: number; limit: number }> {
    return { ...(await this.#index.usage(userId)), limit: this.#max };
  }

  /** A checkpoint id, or a time within the retained history (a time ahead of the clock is now). */
  #state(value: string, field: string): PastState {
    if (value.startsWith('ckp_')) {
      if (!CHECKPOINT_ID.test(value)) throw errors.notFound('checkpoint', value);
      return { checkpointId: value };
    }
    const at = isoTime(value);
    if (!Number.isFinite(at)) throw errors.invalidArgument(`${field} must be a checkpoint id (ckp_…) or an ISO 8601 time`, field);
    const now = this.#now();
    if (at < now - this.#retentionMs) throw errors.historyExpired(`${field} (${value})`);
    return { at: Math.min(at, now) };
  }
}

function checkLabel(label: string): void {
  if ([...label].length > MAX_LABEL) throw errors.invalidArgument(`label must be at most ${MAX_LABEL} characters`, 'label');
}

function info(c: StoredCheckpoint): CheckpointInfo {
  return { checkpointId: c.checkpointId, path: c.path, label: c.label, createdAt: new Date(c.createdAt).toISOString(), files: c.files, bytes: c.bytes };
}
