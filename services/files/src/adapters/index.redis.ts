import { randomBytes } from 'node:crypto';
import { AppError, errors, type RedisClient, type RedisOutbox, userTag } from '@workspace/platform';
import { DEFAULT_MAX_FILES, DEFAULT_MAX_TREE_ENTRIES } from '../config.js';
import { decodeEntry, decodeRecord, encodeEntry, type HistoryRecord, type IndexEntry } from '../domain/entries.js';
import type { ConflictMode, FileIndex, IndexListPage, MoveOutcome, PendingUpload, Precondition } from '../domain/ports.js';
import * as lua from './index.lua.js';
import * as revisionsLua from './revisions.lua.js';
import { PIN_STAGED } from './knowledge-import.lua.js';

type Reply = (string | number | null)[];

const ROOT_PATH = '/files';
type Script = (...args: (string | number | Buffer)[]) => Promise<unknown>;

const SCRIPTS = {
  fsCommit: lua.COMMIT,
  fsPrecheck: lua.PRECHECK,
  fsDelete: lua.DELETE,
  fsMove: lua.MOVE,
  fsStat: lua.STAT,
  fsCreateDirectory: lua.CREATE_DIRECTORY,
  fsPin: lua.PIN,
  fsUnpinAgent: lua.UNPIN_AGENT,
  fsImport: lua.IMPORT,
  fsImportPin: lua.IMPORT_PIN,
  fsClaimUpload: lua.CLAIM_UPLOAD,
  fsReserveUpload: lua.RESERVE_UPLOAD,
  fsTouchUpload: lua.TOUCH_UPLOAD,
  fsClaimGarbage: lua.CLAIM_GARBAGE,
  fsPinStaged: PIN_STAGED,
  fsRevision: revisionsLua.REVISION,
  fsTrash: revisionsLua.TRASH,
  fsRestore: revisionsLua.RESTORE,
  fsRestoreTree: revisionsLua.RESTORE_TREE,
  fsPurge: revisionsLua.PURGE,
  fsRetain: revisionsLua.RETAIN,
  fsUsage: revisionsLua.USAGE,
} as const;

/**
 * Where the index lives in Redis. `namespace` (the bucket) keeps deployments that share a Redis
 * but not a bucket apart: an index describes the objects of one bucket.
 */
export class IndexKeys {
  readonly namespace: string;

  constructor(namespace: string) {
    this.namespace = namespace;
  }

  /** The prefix of every index key of one user (the hash tag puts them in one slot). */
  prefix(userId: string): string {
    return this.ofTag(userTag(userId));
  }

  /** The same prefix from a user's hash tag (`{u:<tenant>}`). */
  ofTag(tag: string): string {
    return `${tag}:fs:${this.namespace}:`;
  }

  /** Users with sweeper work (garbage, uploads in flight), scored by their last registration. */
  get sweep(): string {
    return `files:${this.namespace}:sweep`;
  }

  /** Users with histories, scored by when the retention by age may next drop a record of theirs. */
  get retain(): string {
    return `files:${this.namespace}:retain`;
  }
}

export interface RedisFileIndexOptions {
  redis: RedisClient;
  keys: IndexKeys;
  outbox: RedisOutbox;
  /** Changes kept at least, per user (docs/api/files.md#changes: 100,000). */
  keepChanges?: number;
  /** Age of changes kept at least (docs/api/files.md#changes: 7 days). */
  keepChangesMs?: number;
  /** Records kept in each path's history, the current file's included (docs/api/files.md#retention: FILE_REVISIONS, 100). */
  keepRevisions?: number;
  /** How long a record is kept once it stopped being current (docs/api/files.md#retention: FILE_REVISION_DAYS, 30 days). */
  retentionMs?: number;
  /** The most entries one operation on a tree touches (docs/api/files.md#bounded-tree-work: MAX_TREE_ENTRIES). */
  maxTreeEntries?: number;
  /** The most entries a user may have (docs/api/usage.md#entry-quota: MAX_FILES). */
  maxFiles?: number;
  clock?: () => number;
}

/**
 * The arguments every script of the index takes after P and now (see index.lua.ts): changes to
 * keep, their age, records per path, then (after the revision prefix) MAX_TREE_ENTRIES and MAX_FILES.
 */
export interface ScriptSettings {
  keep: [number, number, number];
  bounds: [number, number];
}

export function scriptSettings(options: RedisFileIndexOptions): ScriptSettings {
  return {
    keep: [options.keepChanges ?? 100_000, options.keepChangesMs ?? 7 * 24 * 3600 * 1000, options.keepRevisions ?? 100],
    bounds: [options.maxTreeEntries ?? DEFAULT_MAX_TREE_ENTRIES, options.maxFiles ?? DEFAULT_MAX_FILES],
  };
}

/**
 * The metadata index on Redis: each change is one Lua script over the user's keys (see
 * index.lua.ts), so the path rules, the entries, the changes feed and the outbox event are
 * one atomic step, with no lock and no call to the object store. Wrap it with
 * withUnavailableErrors so that an unreachable Redis is UNAVAILABLE.
 */
export class RedisFileIndex implements FileIndex {
  readonly #redis: RedisClient;
  readonly #outbox: RedisOutbox;
  readonly #settings: ScriptSettings;
  readonly #now: () => number;
  readonly #retentionMs: number;
  readonly keys: IndexKeys;

  constructor(options: RedisFileIndexOptions) {
    this.#redis = options.redis;
    this.keys = options.keys;
    this.#outbox = options.outbox;
    this.#settings = scriptSettings(options);
    this.#now = options.clock ?? Date.now;
    this.#retentionMs = options.retentionMs ?? 30 * 24 * 3600 * 1000;
    for (const [name, script] of Object.entries(SCRIPTS)) {
      if (!(name in this.#redis)) this.#redis.defineCommand(name, { numberOfKeys: 2, lua: script });
    }
  }

  async #run(name: keyof typeof SCRIPTS, prefix: string, tag: string, args: (string | number | Buffer)[]): Promise<Reply> {
    const script = (this.#redis as unknown as Record<string, Script>)[name]!.bind(this.#redis);
    // A fresh prefix for the revision ids the script makes (it appends a counter).
    const revisions = `rev_${randomBytes(12).toString('hex')}`;
    return (await script(`${prefix}e`, this.#outbox.listKey(tag), prefix, this.#now(), ...this.#settings.keep, revisions, ...this.#settings.bounds, ...args)) as Reply;
  }

  /**
   * Runs a script of a user that may queue events or leave sweeper work, registering the user
   * with the relay and the sweeper at the same time: a marker is only ever dropped when it has
   * been left alone for a grace period, so it cannot be dropped between the two and the script's
   * event or garbage be stranded (see RedisOutbox). The user is also due for the retention by
   * age no later than a retention period from now (what the script records cannot expire sooner).
   */
  async #write(userId: string, name: keyof typeof SCRIPTS, args: (string | number | Buffer)[]): Promise<Reply> {
    const tag = userTag(userId);
    const now = this.#now();
    const [reply] = await Promise.all([
      this.#run(name, this.keys.prefix(userId), tag, args),
      this.#outbox.register(tag),
      this.#redis.zadd(this.keys.sweep, now, tag),
      this.#redis.zadd(this.keys.retain, 'LT', now + this.#retentionMs, tag),
    ]);
    return reply;
  }

  async commit(userId: string, input: { path: string; mode: ConflictMode; uuidPath: string; entry: IndexEntry; uploadId: string; event: string; quotaBytes: number; precondition?: Precondition; summary?: Buffer | undefined }) {
    const reply = await this.#write(userId, 'fsCommit', [input.path, input.mode, input.uuidPath, encodeEntry(input.entry), input.uploadId, input.event, userId, input.quotaBytes, input.precondition ?? '', input.summary?.length ? input.summary : '']);
    refusal(reply);
    return { path: String(reply[1]), replaced: reply[2] === 'updated' };
  }

  async precheck(userId: string, path: string, mode: ConflictMode, quotaBytes: number, precondition: Precondition = ''): Promise<'free' | 'file' | 'directory'> {
    const reply = await this.#run('fsPrecheck', this.keys.prefix(userId), userTag(userId), [path, mode, quotaBytes, precondition]);
    refusal(reply);
    return reply[1] as 'free' | 'file' | 'directory';
  }

  async delete(userId: string, path: string, recursive: boolean, event: string, ifMatch = ''): Promise<{ kind: 'file' | 'directory' }> {
    const reply = await this.#write(userId, 'fsDelete', [path, recursive ? '1' : '0', event, userId, ifMatch]);
    refusal(reply, 'path');
    return { kind: reply[1] as 'file' | 'directory' };
  }

  /** Deletes for good: the file or tree at `path` with its histories and trash (docs/api/files.md#permanent-delete). */
  async purge(userId: string, path: string, recursive: boolean, event: string, ifMatch = ''): Promise<{ kind: 'file' | 'directory' | 'history' }> {
    const reply = await this.#write(userId, 'fsPurge', [path, recursive ? '1' : '0', event, userId, ifMatch]);
    refusal(reply, 'path');
    return { kind: reply[1] as 'file' | 'directory' | 'history' };
  }

  async move(userId: string, input: { op: 'move' | 'copy'; from: string; to: string; mode: ConflictMode; uuidPath: string; event: string; ifMatch?: string; ifMatchTo?: string }): Promise<MoveOutcome> {
    const reply = await this.#write(userId, 'fsMove', [input.from, input.to, input.mode, input.uuidPath, input.op, input.event, userId, input.ifMatch ?? '', input.ifMatchTo ?? '']);
    refusal(reply, 'from');
    return { path: String(reply[1]), kind: reply[2] as 'file' | 'directory' };
  }

  /** Creates a folder explicitly, with its missing parents (docs/api/files.md#folders); false when one was there. */
  async createDirectory(userId: string, path: string, event: string): Promise<{ created: boolean }> {
    const reply = await this.#write(userId, 'fsCreateDirectory', [path, event, userId]);
    refusal(reply);
    return { created: reply[1] === 'created' };
  }

  /**
   * One page of a listing in one MULTI of native commands (atomic, no script): the entries ride
   * in the sorted sets' members (see index.lua.ts), and the latest change id is the version.
   */
  async list(userId: string, input: { path: string; recursive: boolean; after: string; limit: number; from?: string }): Promise<IndexListPage> {
    const prefix = this.keys.prefix(userId);
    const { path, recursive, after, limit, from } = input;
    // NUL then a non-ASCII byte sorts after every "<after>\0<entry>" member (entries are ASCII) and before any longer path.
    const next = (from: string) => `(${from}\0\xff`;
    const range = recursive
      ? [`${prefix}z`, after ? next(after) : from ? `[${from}` : `[${path}/`, `(${path}0`]
      : // '(' + nothing: after the marker "" of an explicit folder (see index.lua.ts), before every name.
        [`${prefix}c:${path}`, after ? next(after.slice(path.length + 1)) : '(', '+'];
    const replies = await this.#redis
      .multi()
      .hget(`${prefix}e`, path)
      .exists(`${prefix}c:${path}`)
      .xrevrange(`${prefix}log`, '+', '-', 'COUNT', 1)
      .zrangebylex(range[0]!, range[1]!, range[2]!, 'LIMIT', 0, limit + 1)
      .exec();
    const failed = replies?.find(([err]) => err)?.[0];
    if (!replies || failed) throw failed ?? new Error('the listing transaction was aborted');
    const [file, dir, latest, members] = replies.map(([, value]) => value) as [string | null, number, [string, string[]][], string[]];
    if (path !== ROOT_PATH) {
      if (file !== null) return { kind: 'file', entry: decodeEntry(file) };
      if (dir === 0) throw errors.notFound('file', path);
    }
    const base = recursive ? '' : `${path}/`;
    const entries = members.slice(0, limit).map((m) => {
      const cut = m.indexOf('\0');
      return cut < 0 ? { path: base + m, entry: undefined } : { path: base + m.slice(0, cut), entry: decodeEntry(m.slice(cut + 1)) };
    });
    return { kind: 'directory', entries, more: members.length > limit, version: latest[0]?.[0] ?? '0-0' };
  }

  async stat(userId: string, paths: readonly string[]): Promise<(IndexEntry | 'directory' | undefined)[]> {
    if (paths.length === 0) return [];
    const reply = await this.#run('fsStat', this.keys.prefix(userId), userTag(userId), [...paths]);
    return reply.map((raw) => (raw === 'D' ? 'directory' : raw ? decodeEntry(String(raw)) : undefined));
  }

  async pin(userId: string, agentId: string, paths: readonly string[]): Promise<IndexEntry[]> {
    const reply = await this.#write(userId, 'fsPin', [agentId, ...paths]);
    if (reply[0] === 'AGENT_REMOVED') throw errors.notFound('agent', agentId);
    if (reply[0] !== 'OK') {
      const index = Number(reply[1]) - 1;
      const err = reply[0] === 'IS_A_DIRECTORY' ? errors.isADirectory(paths[index]!) : errors.notFound('file', paths[index]!);
      throw new AppError(err.code, err.message, { details: { path: paths[index]!, index: String(index) } });
    }
    return reply.slice(1).map((raw) => decodeEntry(String(raw)));
  }

  /** See PIN_STAGED: 'gone' and 'unreserved' name the first upload concerned (0-based). */
  async pinStaged(userId: string, agentId: string, files: readonly { uploadId: string; sha256: string; size: number }[]): Promise<{ status: 'ok' | 'agent-removed' } | { status: 'gone' | 'unreserved'; index: number }> {
    const reply = await this.#write(userId, 'fsPinStaged', [agentId, ...files.flatMap((f) => [f.uploadId, f.sha256, f.size])]);
    if (reply[0] === 'AGENT_REMOVED') return { status: 'agent-removed' };
    if (reply[0] === 'GONE') return { status: 'gone', index: Number(reply[1]) - 1 };
    if (reply[0] === 'UNRESERVED') return { status: 'unreserved', index: Number(reply[1]) - 1 };
    return { status: 'ok' };
  }

  async unpinAgent(userId: string, agentId: string): Promise<number> {
    return Number((await this.#write(userId, 'fsUnpinAgent', [agentId]))[0] ?? 0);
  }

  async pinnedKnowledge(userId: string, agentId: string): Promise<Record<string, string>> {
    return this.#redis.hgetall(`${this.keys.prefix(userId)}kn:${agentId}`);
  }

  /** Imports a file of the old layout for the user of `tenant` (idempotent). */
  async importFile(tenant: string, path: string, entry: IndexEntry): Promise<boolean> {
    const tag = `{u:${tenant}}`;
    await this.#redis.zadd(this.keys.sweep, this.#now(), tag);
    await this.#redis.zadd(this.keys.retain, 'LT', this.#now() + this.#retentionMs, tag);
    const reply = (await this.#run('fsImport', this.keys.ofTag(tag), tag, [path, encodeEntry(entry)])) as unknown as number;
    return Number(reply) === 1;
  }

  async importPin(tenant: string, agentId: string, sha256: string, key: string, size: number): Promise<boolean> {
    const tag = `{u:${tenant}}`;
    const reply = (await this.#run('fsImportPin', this.keys.ofTag(tag), tag, [agentId, sha256, key, size])) as unknown as number;
    return Number(reply) === 1;
  }

  async addUpload(userId: string, id: string, upload: PendingUpload, expiresAt: number): Promise<void> {
    const prefix = this.keys.prefix(userId);
    await this.#redis.zadd(this.keys.sweep, this.#now(), userTag(userId));
    await this.#redis.multi().hset(`${prefix}up`, id, JSON.stringify(upload)).zadd(`${prefix}upx`, expiresAt, id).exec();
  }

  async reserveUpload(userId: string, reservations: readonly { id: string; totalBytes: number }[], quotaBytes: number): Promise<void> {
    refusal(await this.#run('fsReserveUpload', this.keys.prefix(userId), userTag(userId), [quotaBytes, ...reservations.flatMap((r) => [r.id, r.totalBytes])]));
  }

  async getUpload(userId: string, id: string): Promise<PendingUpload | undefined> {
    const raw = await this.#redis.hget(`${this.keys.prefix(userId)}up`, id);
    return raw ? (JSON.parse(raw) as PendingUpload) : undefined;
  }

  /** Updates an upload still pending (its multipart id, a later expiry); false when it is gone. */
  async touchUpload(userId: string, id: string, upload: PendingUpload, expiresAt: number): Promise<boolean> {
    const reply = (await this.#run('fsTouchUpload', this.keys.prefix(userId), userTag(userId), [id, JSON.stringify(upload), expiresAt])) as unknown;
    return Number(reply) === 1;
  }

  async claimUpload(userId: string, id: string): Promise<PendingUpload | undefined> {
    return this.claimUploadOf(userTag(userId), id);
  }

  /** The sweeper's claim, by the user's hash tag. */
  async claimUploadOf(tag: string, id: string): Promise<PendingUpload | undefined> {
    const reply = (await this.#run('fsClaimUpload', this.keys.ofTag(tag), tag, [id])) as unknown;
    return typeof reply === 'string' ? (JSON.parse(reply) as PendingUpload) : undefined;
  }

  async expiredUploads(tag: string, now: number, count: number): Promise<string[]> {
    return this.#redis.zrangebyscore(`${this.keys.ofTag(tag)}upx`, '-inf', now, 'LIMIT', 0, count);
  }

  /** Unreferenced objects whose grace ended before `cutoff`, each now the caller's alone to delete. */
  async claimGarbage(tag: string, cutoff: number, count: number): Promise<string[]> {
    return (await this.#run('fsClaimGarbage', this.keys.ofTag(tag), tag, [cutoff, count])) as unknown as string[];
  }

  /** Puts claimed objects back (their deletion failed), to be tried again at the next sweep. */
  async requeueGarbage(tag: string, keys: readonly string[]): Promise<void> {
    if (keys.length > 0) await this.#redis.zadd(`${this.keys.ofTag(tag)}gc`, 'NX', ...keys.flatMap((k) => ['0', k]));
  }

  /**
   * The retention by age of one user (by hash tag): drops what stopped being current before
   * `cutoff`, looking at up to `count` paths. → records dropped, the earliest time a path may
   * next have something to drop (undefined: no histories left), and whether paths were left.
   */
  async retain(tag: string, cutoff: number, count: number): Promise<{ dropped: number; next: number | undefined; more: boolean }> {
    const [dropped, next, more] = (await this.#run('fsRetain', this.keys.ofTag(tag), tag, [cutoff, count])) as [number, string, number];
    return { dropped: Number(dropped), next: next === '' ? undefined : Number(next), more: Number(more) === 1 };
  }

  /** Whether a user has sweeper work left (garbage or uploads in flight). */
  async hasSweepWork(tag: string): Promise<boolean> {
    const prefix = this.keys.ofTag(tag);
    const [gc, up] = await Promise.all([this.#redis.zcard(`${prefix}gc`), this.#redis.zcard(`${prefix}upx`)]);
    return gc + up > 0;
  }

  async history(userId: string, path: string): Promise<{ current: IndexEntry | 'directory' | undefined; records: HistoryRecord[] }> {
    const prefix = this.keys.prefix(userId);
    const replies = await this.#redis.multi().hget(`${prefix}e`, path).exists(`${prefix}c:${path}`).lrange(`${prefix}h:${path}`, 0, -1).exec();
    const failed = replies?.find(([err]) => err)?.[0];
    if (!replies || failed) throw failed ?? new Error('the history transaction was aborted');
    const [file, dir, records] = replies.map(([, value]) => value) as [string | null, number, string[]];
    const current = file !== null ? decodeEntry(file) : dir === 1 || path === ROOT_PATH ? 'directory' : undefined;
    return { current, records: records.map(decodeRecord) };
  }

  async revision(userId: string, path: string, revision: string): Promise<IndexEntry | undefined> {
    const reply = (await this.#run('fsRevision', this.keys.prefix(userId), userTag(userId), [path, revision])) as unknown;
    return typeof reply === 'string' ? decodeEntry(reply) : undefined;
  }

  async trash(userId: string, path: string, recursive: boolean): Promise<{ path: string; record: HistoryRecord }[]> {
    const reply = (await this.#run('fsTrash', this.keys.prefix(userId), userTag(userId), [path, recursive ? '1' : '0'])) as unknown as string[];
    const out: { path: string; record: HistoryRecord }[] = [];
    for (let i = 0; i + 1 < reply.length; i += 2) if (reply[i + 1]) out.push({ path: reply[i]!, record: decodeRecord(reply[i + 1]!) });
    return out;
  }

  async restore(userId: string, input: { path: string; revision: string; event: string; ifMatch?: string }): Promise<{ entry: IndexEntry; replaced: boolean }> {
    const reply = await this.#write(userId, 'fsRestore', [input.path, input.revision, input.event, userId, input.ifMatch ?? '']);
    refusal(reply);
    return { entry: decodeEntry(String(reply[3])), replaced: reply[2] === 'updated' };
  }

  async restoreTree(userId: string, input: { path: string; event: string; ifMatch?: string }): Promise<{ restored: number }> {
    const reply = await this.#write(userId, 'fsRestoreTree', [input.path, input.event, userId, input.ifMatch ?? '']);
    refusal(reply, 'path');
    return { restored: Number(reply[1]) };
  }

  async usage(userId: string): Promise<{ count: number; bytes: number; entries: number; maxFiles: number }> {
    const [count, bytes, entries] = (await this.#run('fsUsage', this.keys.prefix(userId), userTag(userId), [])) as [number, number, number];
    return { count: Number(count), bytes: Math.max(0, Number(bytes)), entries: Number(entries), maxFiles: this.#settings.bounds[1] };
  }

  /** One shared random key (created by whichever replica starts first), for signing cursors. */
  async cursorKey(): Promise<Buffer> {
    const key = 'files:cursor-key';
    await this.#redis.set(key, randomBytes(32).toString('base64'), 'NX');
    return Buffer.from((await this.#redis.get(key))!, 'base64');
  }
}

/**
 * Throws the refusal a script answered, if any. `field` names the request's argument that holds
 * the path of a tree refused for its size (TREE_TOO_LARGE).
 */
export function refusal(reply: Reply, field = 'path'): void {
  const [code, path = '', why = '', quota = ''] = reply.map(String);
  switch (code) {
    case 'OK':
      return;
    case 'QUOTA_EXCEEDED':
      // {code, used, limit, the quota's setting: FILE_QUOTA_BYTES or MAX_FILES}
      throw errors.quotaExceeded(quota, Number(why), Number(path));
    case 'TREE_TOO_LARGE':
      // {code, path, MAX_TREE_ENTRIES}
      throw errors.treeTooLarge(path, field, Number(why));
    case 'FILE_EXISTS':
      throw errors.fileExists(path);
    case 'PATH_CONFLICT':
      throw errors.pathConflict(path, why);
    case 'INVALID_PATH':
      throw errors.invalidPath(`invalid path: ${why}`, path);
    case 'FILE_NOT_FOUND':
      throw errors.notFound('file', path);
    case 'DIRECTORY_NOT_EMPTY':
      throw errors.directoryNotEmpty(path);
    case 'REVISION_NOT_FOUND':
      throw errors.notFound('revision', path);
    case 'PRECONDITION_FAILED':
      // {code, the current sha256 ('' when no file is there)}
      throw errors.filePreconditionFailed(path === '' ? null : path);
    case 'UPLOAD_GONE':
      throw errors.unavailable('the upload (it expired before its commit; send it again)');
    default:
      throw errors.internal(new Error(`unexpected index reply ${code}`));
  }
}
