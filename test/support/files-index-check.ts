import { tenantKey } from '@workspace/platform';
import { s3Client, testRedis } from './backends.js';
import type { ApiUser, SharedStack } from './stack.js';

/**
 * An independent audit of one user's metadata index (services/files/src/adapters/index.lua.ts)
 * and byte accounting (docs/api/files.md#revisions, docs/api/usage.md#byte-quota): it recounts from
 * the entries and the histories what the index keeps incrementally, so drift of any kind shows as a
 * difference.
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

/** Reads the user's index and checks its invariants; `agents`: the Agents whose knowledge pins to count too. */
export async function auditIndex(stack: SharedStack, u: ApiUser, agents: readonly string[] = []): Promise<IndexAudit> {
  const bucket = stack.services.files!.env.S3_BUCKET!;
  const P = `{u:${tenantKey(u.sub)}}:fs:${bucket}:`;
  const redis = testRedis('index-audit');
  const problems: string[] = [];
  try {
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
    await auditTree(redis, P, zset, problems);
    const bytes = [...sizes.values()].reduce((a, b) => a + b, 0);
    if (bytes !== used) problems.push(`used ${used}, recounted ${bytes}`);
    return { problems, bytes, referenced: [...counted.keys()].sort(), used, reserved };
  } finally {
    await redis.quit();
  }
}

/**
 * The checkpoints (services/files/src/adapters/checkpoints.lua.ts): each entry of each one holds a
 * reference to its object (counted with the others' by \`count\`), \`P cko\` counts the checkpoint
 * entries per object, \`P ckb\` is the bytes of those objects, each once, and every checkpoint listed
 * has its metadata. (Checkpoints of versions that kept \`P kr:<path>\` instead are not audited: no
 * test makes them.)
 */
async function auditCheckpoints(redis: ReturnType<typeof testRedis>, P: string, count: (key: string, size: string, where: string) => void, problems: string[]): Promise<void> {
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
  }
  for (const id of Object.keys(meta)) if (!ids.includes(id)) problems.push(`checkpoint ${id}: metadata of a checkpoint not listed`);
  const cko = await redis.hgetall(`${P}cko`);
  for (const [key, h] of held) if (Number(cko[key] ?? 0) !== h.n) problems.push(`cko of ${key}: ${cko[key] ?? 0}, recounted ${h.n}`);
  for (const key of Object.keys(cko)) if (!held.has(key)) problems.push(`cko of ${key}: ${cko[key]} but no checkpoint entry holds it`);
  const ckb = Number((await redis.get(`${P}ckb`)) ?? '0');
  const bytes = [...held.values()].reduce((a, h) => a + h.size, 0);
  if (ckb !== bytes) problems.push(`ckb ${ckb}, recounted ${bytes}`);
}

/** The object keys of the user in the stack's bucket, sorted. */
export async function storedObjects(stack: SharedStack, u: ApiUser): Promise<string[]> {
  const bucket = stack.services.files!.env.S3_BUCKET!;
  const keys: string[] = [];
  for await (const o of s3Client().listObjectsV2(bucket, `b/${tenantKey(u.sub)}/`, true) as AsyncIterable<{ name?: string }>) if (o.name) keys.push(o.name);
  return keys.sort();
}

/**
 * The tree: every member of the listing set (a file as "path\0entry", a directory as its path)
 * is in its parent's child set the same way by name, every directory has a child set, and no
 * child set holds anything else (but the marker "" of an explicit folder).
 */
async function auditTree(redis: ReturnType<typeof testRedis>, P: string, zset: Set<string>, problems: string[]): Promise<void> {
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
  for (const [i, dir] of dirs.entries()) {
    const want = [...expected.get(dir)!].sort();
    // An explicit folder (docs/api/files.md#folders) also holds the marker "", which keeps it while it is empty.
    if (dir !== '/files' && sets[i]!.includes('')) want.unshift('');
    const got = [...sets[i]!].sort();
    if (dir !== '/files' && got.length === 0) problems.push(`${dir}: a directory without a child set`);
    if (JSON.stringify(want) !== JSON.stringify(got)) problems.push(`${dir}: child set ${JSON.stringify(got).slice(0, 300)}, expected ${JSON.stringify(want).slice(0, 300)}`);
  }
}

