import { randomBytes } from 'node:crypto';
import { errors, type RedisClient, type RedisOutbox, userTag } from '@workspace/platform';
import type { CheckpointIndex, ConflictMode, PastState, StoredCheckpoint } from '../domain/ports.js';
import * as lua from './checkpoints.lua.js';
import { refusal, scriptSettings, type IndexKeys, type RedisFileIndexOptions, type ScriptSettings } from './index.redis.js';

type Reply = (string | number | null)[];

type Script = (...args: (string | number)[]) => Promise<unknown>;

const SCRIPTS = {
  fsCreateCheckpoint: lua.CREATE_CHECKPOINT,
  fsDeleteCheckpoint: lua.DELETE_CHECKPOINT,
  fsRewind: lua.REWIND,
  fsFork: lua.FORK,
} as const;

/** As RedisFileIndex's: the scripts share the index's prelude and its arguments. */
export type RedisCheckpointIndexOptions = RedisFileIndexOptions;

/**
 * Checkpoints, rewind and fork on the Redis index (see checkpoints.lua.ts for the keys): each
 * write is one Lua script over the user's keys, beside the index's own (index.redis.ts).
 */
export class RedisCheckpointIndex implements CheckpointIndex {
  readonly #redis: RedisClient;
  readonly #keys: IndexKeys;
  readonly #outbox: RedisOutbox;
  readonly #settings: ScriptSettings;
  readonly #now: () => number;
  readonly #retentionMs: number;

  constructor(options: RedisCheckpointIndexOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys;
    this.#outbox = options.outbox;
    this.#settings = scriptSettings(options);
    this.#now = options.clock ?? Date.now;
    this.#retentionMs = options.retentionMs ?? 30 * 24 * 3600 * 1000;
    for (const [name, script] of Object.entries(SCRIPTS)) {
      if (!(name in this.#redis)) this.#redis.defineCommand(name, { numberOfKeys: 2, lua: script });
    }
  }

  /** Runs a script that may queue an event or leave garbage, registering the user as the index's writes do. */
  async #write(userId: string, name: keyof typeof SCRIPTS, args: (string | number)[]): Promise<Reply> {
    const tag = userTag(userId);
    const prefix = this.#keys.prefix(userId);
    const now = this.#now();
    const script = (this.#redis as unknown as Record<string, Script>)[name]!.bind(this.#redis);
    const revisions = `rev_${randomBytes(12).toString('hex')}`;
    const [reply] = await Promise.all([
      script(`${prefix}e`, this.#outbox.listKey(tag), prefix, now, ...this.#settings.keep, revisions, ...this.#settings.bounds, ...args) as Promise<Reply>,
      this.#outbox.register(tag),
      this.#redis.zadd(this.#keys.sweep, now, tag),
      this.#redis.zadd(this.#keys.retain, 'LT', now + this.#retentionMs, tag),
    ]);
    return reply;
  }

  async create(userId: string, input: { checkpointId: string; path: string; label: string; max: number }): Promise<StoredCheckpoint> {
    const reply = await this.#write(userId, 'fsCreateCheckpoint', [input.checkpointId, input.path, input.label, input.max]);
    past(reply);
    quota(reply);
    refusal(reply, 'path');
    return parse(input.checkpointId, String(reply[1]));
  }

  async get(userId: string, checkpointId: string): Promise<StoredCheckpoint | undefined> {
    const raw = await this.#redis.hget(`${this.#keys.prefix(userId)}ckm`, checkpointId);
    return raw ? parse(checkpointId, raw) : undefined;
  }

  async list(userId: string, path: string): Promise<StoredCheckpoint[]> {
    const prefix = this.#keys.prefix(userId);
    const replies = await this.#redis.multi().zrevrange(`${prefix}ckl`, 0, -1).hgetall(`${prefix}ckm`).exec();
    const failed = replies?.find(([err]) => err)?.[0];
    if (!replies || failed) throw failed ?? new Error('the checkpoints transaction was aborted');
    const [ids, metas] = replies.map(([, value]) => value) as [string[], Record<string, string>];
    return ids.flatMap((id) => (metas[id] ? [parse(id, metas[id])] : [])).filter((c) => c.path === path || path === '/files' || c.path.startsWith(`${path}/`));
  }

  async delete(userId: string, checkpointId: string): Promise<boolean> {
    const reply = await this.#write(userId, 'fsDeleteCheckpoint', [checkpointId]);
    return reply[0] === 'OK';
  }

  async rewind(userId: string, input: { path: string; state: PastState; checkpointId: string; label: string; max: number; event: string; to: string }) {
    const [mode, arg] = stateArgs(input.state);
    const reply = await this.#write(userId, 'fsRewind', [input.path, mode, arg, input.checkpointId, input.label, input.max, input.event, userId, input.to]);
    if (reply[0] === 'NOT_COVERED') return { notCovered: true as const };
    past(reply);
    quota(reply);
    refusal(reply, 'path');
    return { notCovered: false as const, restored: Number(reply[1]), removed: Number(reply[2]), unchanged: Number(reply[3]) };
  }

  async fork(userId: string, input: { from: string; to: string; mode: ConflictMode; uuidPath: string; state: PastState; event: string; ifMatch: string; ifMatchTo: string }) {
    const [mode, arg] = stateArgs(input.state);
    const reply = await this.#write(userId, 'fsFork', [input.from, input.to, input.mode, input.uuidPath, mode, arg, input.event, userId, input.ifMatch, input.ifMatchTo]);
    if (reply[0] === 'NOT_COVERED') return { notCovered: true as const };
    past(reply);
    refusal(reply, 'from');
    return { notCovered: false as const, path: String(reply[1]), kind: reply[2] as 'file' | 'directory' };
  }

  async usage(userId: string): Promise<{ count: number; bytes: number }> {
    const prefix = this.#keys.prefix(userId);
    const replies = await this.#redis.multi().hlen(`${prefix}ckm`).get(`${prefix}ckb`).exec();
    const failed = replies?.find(([err]) => err)?.[0];
    if (!replies || failed) throw failed ?? new Error('the usage transaction was aborted');
    return { count: Number(replies[0]![1]), bytes: Math.max(0, Number(replies[1]![1] ?? 0)) };
  }
}

function stateArgs(state: PastState): [string, string | number] {
  return 'checkpointId' in state ? ['ck', state.checkpointId] : ['at', state.at];
}

function parse(checkpointId: string, raw: string): StoredCheckpoint {
  const m = JSON.parse(raw) as { path: string; label: string; createdAt: number; files: number; bytes: number };
  // cjson encodes an empty label as "" and numbers as numbers.
  return { checkpointId, path: m.path, label: m.label ?? '', createdAt: Number(m.createdAt), files: Number(m.files), bytes: Number(m.bytes) };
}

/** MAX_CHECKPOINTS reached: {'CHECKPOINT_QUOTA', count, max}. */
function quota(reply: Reply): void {
  if (reply[0] === 'CHECKPOINT_QUOTA') throw errors.quotaExceeded('MAX_CHECKPOINTS', Number(reply[2]), Number(reply[1]));
}

/** The refusals of a past state: an unknown checkpoint, or history that no longer reaches back (a tree past the bound: refusal()). */
function past(reply: Reply): void {
  if (reply[0] === 'CHECKPOINT_NOT_FOUND') throw errors.notFound('checkpoint', String(reply[1]));
  if (reply[0] === 'HISTORY_EXPIRED') throw errors.historyExpired(`the history of ${String(reply[1])}`);
}
