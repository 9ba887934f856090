import type { Cluster } from 'ioredis';
import type { RedisClient } from '@workspace/platform';

/**
 * An independent audit of one user's metadata index (services/files/src/adapters/index.lua.ts)
 * and byte accounting (docs/api/files.md#revisions, docs/api/usage.md#byte-quota): it recounts from
 * the entries and the histories what the index keeps incrementally, so drift of any kind shows as a
 * difference. The integration suites call it on their own Redis (auditIndexAt); the end-to-end
 * suites through test/support/files-index-check.ts, on a stack's.
 */
export interface IndexAudit {
  /** Problems found; empty when the index is consistent. */
  problems: string[];
  /** Bytes of every distinct referenced object, recounted. */
  bytes: number;
  /** The object keys the index references, sorted. */
  referenced: string[];
  /** GET P used, as stored. */
  used: number;
  /** GET P rsvt and HLEN P rsv: reservations of uploads in flight. */
  reserved: { total: number; uploads: number };
}

const field = (v: string, i: number): string => v.split('|')[i] ?? '';

/**
 * Reads the index of prefix `P` (`{u:<tenant>}:fs:<bucket>:`) and checks its invariants; `agents`:
 * the Agents whose knowledge pins to count too.
 */
export async function auditIndexAt(redis: RedisClient, P: string, agents: readonly string[] = []): Promise<IndexAudit> {
  const problems: string[] = [];
  const entries = await redis.hgetall(`${P}e`);
  const refs = await redis.hgetall(`${P}refs`);
  const sz = await redis.hgetall(`${P}sz`);
  const used = Number((await redis.get(`${P}used`)) ?? '0');
  const reserved = { total: Number((await redis.get(`${P}rsvt`)) ?? '0'), uploads: await redis.hlen(`${P}rsv`) };
  const trash = new Set(await redis.zrange(`${P}t`, '0', '-1'));
  const withHistory = await redis.zrange(`${P}hx`, '0', '-1');
  const zset = new Set(await redis.zrange(`${P}z`, '0', '-1'));
  const counted = new Map<string, number>();
  const sizes = new Map<string, number>();
  const count = (key: string, size: string, where: string) => {
    counted.set(key, (counted.get(key) ?? 0) + 1);
    const known = sizes.get(key);
    if (known !== undefined && known !== Number(size)) problems.push(`${where}: object ${key} has two sizes`);
    sizes.set(key, Number(size));
  };
  for (const [path, v] of Object.entries(entries)) {
    count(field(v, 3), field(v, 0), path);
    if (!zset.has(`${path}\0${v}`)) problems.push(`${path}: file not in the listing set`);
    if (trash.has(path)) problems.push(`${path}: in the trash while a file is there`);
  }
  const histories = await Promise.all(withHistory.map((path) => redis.lrange(`${P}h:${path}`, 0, -1)));
  for (const [i, path] of withHistory.entries()) {
    const records = histories[i]!;
    if (records.length === 0) problems.push(`${path}: listed with a history but has none`);
    for (const r of records) count(field(r, 5), field(r, 3), `${path} history`);
    const newestDeleted = records[0] !== undefined && field(records[0], 1) === '1';
    if (newestDeleted && !entries[path] && !trash.has(path)) problems.push(`${path}: deleted, holds no file, but not in the trash`);
    if (trash.has(path) && !newestDeleted) problems.push(`${path}: in the trash but its newest record is no deletion`);
  }
  const listed = new Set(withHistory);
  for (const path of trash) if (!listed.has(path)) problems.push(`${path}: in the trash without a history`);
  await auditCheckpoints(redis, P, count, problems);
  for (const agent of agents) {
    for (const key of Object.values(await redis.hgetall(`${P}kn:${agent}`))) count(key, sizes.has(key) ? String(sizes.get(key)) : (sz[key] ?? 'NaN'), `pins of ${agent}`);
  }
  for (const [key, n] of counted) if (Number(refs[key] ?? 0) !== n) problems.push(`refs of ${key}: ${refs[key] ?? 0}, recounted ${n}`);
  for (const key of Object.keys(refs)) if (!counted.has(key)) problems.push(`refs of ${key}: ${refs[key]} but nothing references it`);
  for (const [key, size] of sizes) if (Number(sz[key]) !== size) problems.push(`sz of ${key}: ${sz[key]}, expected ${size}`);
  for (const key of Object.keys(sz)) if (!sizes.has(key)) problems.push(`sz of ${key} kept for an unreferenced object`);
  // Content sharing: object → sha256 for every referenced object, sha256 → a referenced object of it.
  const ks = await redis.hgetall(`${P}ks`);
  const sk = await redis.hgetall(`${P}sk`);
  for (const key of Object.keys(ks)) if (!counted.has(key)) problems.push(`ks of ${key} kept for an unreferenced object`);
  for (const [sha, key] of Object.entries(sk)) if (ks[key] !== sha) problems.push(`sk of ${sha}: ${key}, which is not an object of those bytes`);
  const explicit = await auditTree(redis, P, zset, problems);
  await auditFolderHistories(redis, P, explicit, problems);
  const bytes = [...sizes.values()].reduce((a, b) => a + b, 0);
  if (bytes !== used) problems.push(`used ${used}, recounted ${bytes}`);
  return { problems, bytes, referenced: [...counted.keys()].sort(), used, reserved };
}

/**
 * The checkpoints (services/files/src/adapters/checkpoints.lua.ts): each entry of each one holds a
 * reference to its object (counted with the others' by `count`), `P cko` counts the checkpoint
 * entries per object, `P ckb` is the bytes of those objects, each once, every checkpoint listed
 * has its metadata, and the explicit folders one recorded (`P ckd:<id>`) are as many as its
 * metadata says and lie at or below its path. (Checkpoints of versions that kept `P kr:<path>`
 * instead, or no folders, are not audited: no test makes them.)
 */
async function auditCheckpoints(redis: RedisClient, P: string, count: (key: string, size: string, where: string) => void, problems: string[]): Promise<void> {
  const ids = await redis.zrange(`${P}ckl`, '0', '-1');
  const meta = await redis.hgetall(`${P}ckm`);
  const held = new Map<string, { n: number; size: number }>();
  for (const id of ids) {
    if (!meta[id]) problems.push(`checkpoint ${id}: listed without its metadata`);
    for (const [path, v] of Object.entries(await redis.hgetall(`${P}ck:${id}`))) {
      const key = field(v, 3);
      count(key, field(v, 0), `checkpoint ${id} at ${path}`);
      const h = held.get(key) ?? { n: 0, size: Number(field(v, 0)) };
      h.n += 1;
      held.set(key, h);
    }
    if (!meta[id]) continue;
    const m = JSON.parse(meta[id]) as { path: string; folders?: number };
    const folders = await redis.zrange(`${P}ckd:${id}`, '0', '-1');
    if (m.folders === undefined) problems.push(`checkpoint ${id}: no count of its folders`);
    else if (folders.length !== m.folders) problems.push(`checkpoint ${id}: ${folders.length} folders recorded, its metadata says ${m.folders}`);
    for (const d of folders) if (!(m.path === '/files' ? d.startsWith('/files/') : d === m.path || d.startsWith(`${m.path}/`))) problems.push(`checkpoint ${id}: folder ${d} outside ${m.path}`);
  }
  for (const id of Object.keys(meta)) if (!ids.includes(id)) problems.push(`checkpoint ${id}: metadata of a checkpoint not listed`);
  for (const key of await keysLike(redis, `${P}ckd:`)) {
    const id = key.slice(`${P}ckd:`.length);
    if (!ids.includes(id)) problems.push(`${key}: the folders of a checkpoint not listed`);
  }
  const cko = await redis.hgetall(`${P}cko`);
  for (const [key, h] of held) if (Number(cko[key] ?? 0) !== h.n) problems.push(`cko of ${key}: ${cko[key] ?? 0}, recounted ${h.n}`);
  for (const key of Object.keys(cko)) if (!held.has(key)) problems.push(`cko of ${key}: ${cko[key]} but no checkpoint entry holds it`);
  const ckb = Number((await redis.get(`${P}ckb`)) ?? '0');
  const bytes = [...held.values()].reduce((a, h) => a + h.size, 0);
  if (ckb !== bytes) problems.push(`ckb ${ckb}, recounted ${bytes}`);
}

/**
 * The tree: every member of the listing set (a file as "path\0entry", a directory as its path)
 * is in its parent's child set the same way by name, every directory has a child set, and no
 * child set holds anything else (but the marker "" of an explicit folder).
 * → the explicit folders.
 */
async function auditTree(redis: RedisClient, P: string, zset: Set<string>, problems: string[]): Promise<Set<string>> {
  const expected = new Map<string, Set<string>>([['/files', new Set()]]);
  for (const m of zset) {
    const [path = '', entry] = m.split('\0');
    const cut = path.lastIndexOf('/');
    const parent = path.slice(0, cut);
    const name = path.slice(cut + 1);
    if (!expected.has(parent)) expected.set(parent, new Set());
    expected.get(parent)!.add(entry === undefined ? name : `${name}\0${entry}`);
    if (entry === undefined && !expected.has(path)) expected.set(path, new Set());
  }
  const dirs = [...expected.keys()];
  const sets = await Promise.all(dirs.map((d) => redis.zrange(`${P}c:${d}`, '0', '-1')));
  const explicit = new Set<string>();
  for (const [i, dir] of dirs.entries()) {
    const want = [...expected.get(dir)!].sort();
    // An explicit folder (docs/api/files.md#folders) also holds the marker "", which keeps it while it is empty.
    if (dir !== '/files' && sets[i]!.includes('')) {
      want.unshift('');
      explicit.add(dir);
    }
    const got = [...sets[i]!].sort();
    if (dir !== '/files' && got.length === 0) problems.push(`${dir}: a directory without a child set`);
    if (JSON.stringify(want) !== JSON.stringify(got)) problems.push(`${dir}: child set ${JSON.stringify(got).slice(0, 300)}, expected ${JSON.stringify(want).slice(0, 300)}`);
  }
  return explicit;
}

/**
 * The histories of explicit folders (`P dh:<path>`, index.lua.ts): every explicit folder has one
 * whose newest record is open ("createdAt|"), and only the newest record of an explicit folder is;
 * the records are "createdAt|deletedAt" (ms), each span in order, newest first; `P dhx` lists
 * exactly the paths with one, and `P dho` the same paths.
 */
async function auditFolderHistories(redis: RedisClient, P: string, explicit: Set<string>, problems: string[]): Promise<void> {
  const listed = await redis.zrange(`${P}dhx`, '0', '-1');
  const retained = new Set(await redis.zrange(`${P}dho`, '0', '-1'));
  const set = new Set(listed);
  for (const p of listed) if (!retained.has(p)) problems.push(`${p}: a folder history the retention does not look at`);
  for (const p of retained) if (!set.has(p)) problems.push(`${p}: in dho without a folder history listed`);
  for (const key of await keysLike(redis, `${P}dh:`)) {
    const p = key.slice(`${P}dh:`.length);
    if (!set.has(p)) problems.push(`${p}: a folder history not listed in dhx`);
  }
  for (const d of explicit) if (!set.has(d)) problems.push(`${d}: an explicit folder without a folder history`);
  for (const p of listed) {
    const records = await redis.lrange(`${P}dh:${p}`, 0, -1);
    if (records.length === 0) problems.push(`${p}: listed with a folder history but has none`);
    let newer = Infinity;
    for (const [i, r] of records.entries()) {
      const m = /^(\d+)\|(\d*)$/.exec(r);
      if (!m) {
        problems.push(`${p}: folder record ${JSON.stringify(r)} is malformed`);
        continue;
      }
      const from = Number(m[1]);
      const open = m[2] === '';
      if (open && i > 0) problems.push(`${p}: an open folder record below the newest`);
      if (open && !explicit.has(p)) problems.push(`${p}: its folder record is open but no explicit folder is there`);
      if (!open && i === 0 && explicit.has(p)) problems.push(`${p}: an explicit folder whose newest folder record is closed`);
      if (!open && Number(m[2]) < from) problems.push(`${p}: a folder record that ends before it begins`);
      if ((open ? from : Number(m[2])) > newer) problems.push(`${p}: folder records out of order`);
      newer = from;
    }
  }
}

/** The keys that start with `prefix` (on every master of a cluster: they share the user's slot). */
async function keysLike(redis: RedisClient, prefix: string): Promise<string[]> {
  const pattern = `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
  const nodes = redis.isCluster ? (redis as Cluster).nodes('master') : [redis];
  const keys: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
  }
  return keys.sort();
}
