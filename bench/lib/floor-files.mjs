// The floor of the files scenarios whose work is the metadata index: the least any gateway and
// files service of this design can do per request, as one bare process (Express 5 and ioredis; no
// authentication, rate limit, validation, logging, metrics or gRPC hop) working on the very keys
// of the bench user's index in the stack's Redis.
//
// - GET /list/:user?path=&recursive=&limit=&after=: one ZRANGEBYLEX of the same sorted set the
//   files service reads (the whole tree's, or the folder's child set), its members rendered as
//   the listing's JSON entries (the same fields and bytes).
// - POST /move, /delete, /restore, /checkpoint, /rewind and DELETE /checkpoint/:user/:id: the
//   index's own script for the step (services/files' RedisFileIndex and RedisCheckpointIndex,
//   which do nothing but assemble its arguments and send one EVALSHA), so the floor is what Redis
//   must run for it plus one request in and one round trip to Redis. Its events go to an outbox
//   of its own namespace, which no relay drains (the floor drops it when it stops).
//
// - POST /mcp/:user: a JSON-RPC tools/call of read_text_file or edit_file, as an MCP server of
//   this design must serve it at the least: the file's entry (one HGET of the index), its object
//   (one S3 GET), and for an edit the new bytes PUT to the store under a new key and committed by
//   the index's COMMIT script on the bytes it read (If-Match); the answer as the tool's
//   structured result. No session, authentication, rate limit, schema check or gRPC hop.
//
// - GET /search/:user?path=&q=: a case-sensitive literal search of a tree as an index of this
//   design must serve it at the least: the tree's entries (one ZRANGEBYLEX), their content
//   summaries (HMGET of the summaries hash, 1,000 keys a call), the files whose summary may hold
//   every trigram of the literal read from S3 (16 at a time) and matched line by line; the
//   matches as JSON.
//
// Prints {"msg":"listening","port":N} (IPC) when it serves. startFilesFloor() starts it.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { forkServer } from './child-server.mjs';
import { BENCH_MAX_TREE_ENTRIES } from './config.mjs';

if (process.env.FLOOR_ROLE === 'files') {
  const { default: express } = await import('express');
  const { createRedis, RedisOutbox, literalTrigrams, mayContain, userTag } = await import('@workspace/platform');
  const dist = (p) => new URL(`../../services/files/dist/${p}`, import.meta.url).href;
  const { IndexKeys, RedisFileIndex } = await import(dist('adapters/index.redis.js'));
  const { RedisCheckpointIndex } = await import(dist('adapters/checkpoints.redis.js'));
  const { mimeTypeOf } = await import(dist('domain/media-types.js'));
  const redis = createRedis({ url: process.env.FLOOR_REDIS_URL });
  const keys = new IndexKeys(process.env.FLOOR_BUCKET);
  const outbox = new RedisOutbox({ redis, namespace: `bench-floor-${randomBytes(6).toString('hex')}` });
  // The bound of the stack beside it (BENCH_MAX_TREE_ENTRIES).
  const index = new RedisFileIndex({ redis, keys, outbox, maxTreeEntries: BENCH_MAX_TREE_ENTRIES });
  const checkpoints = new RedisCheckpointIndex({ redis, keys, outbox, maxTreeEntries: BENCH_MAX_TREE_ENTRIES });
  const users = new Set();
  const event = () => JSON.stringify({ id: randomUUID(), time: new Date().toISOString(), source: 'bench-floor' });

  /** A member of the tree's set ("path" or "path\0entry") or a child set ("name", …) as the listing's JSON entry. */
  const entryJson = (path, raw) => {
    const name = path.slice(path.lastIndexOf('/') + 1);
    const head = `{"path":${JSON.stringify(path)},"name":${JSON.stringify(name)},"type":"${raw === undefined ? 'directory' : 'file'}"`;
    if (raw === undefined) return `${head}}`;
    const [size, mtime, sha256] = raw.split('|');
    return `${head},"size":${size},"modifiedAt":"${new Date(Number(mtime)).toISOString()}","mimeType":${JSON.stringify(mimeTypeOf(name))},"sha256":"${sha256}"}`;
  };

  const app = express();
  app.use(express.json());
  app.get('/list/:user', async (req, res) => {
    const { user } = req.params;
    users.add(user);
    const path = String(req.query.path);
    const recursive = req.query.recursive === 'true';
    const limit = req.query.limit ? Number(req.query.limit) : 0;
    const prefix = keys.prefix(user);
    // A page resumes after the path `after` as the index's listing does (NUL, then a byte above any entry's).
    const after = req.query.after ? String(req.query.after) : '';
    const range = recursive ? [`${prefix}z`, after ? `(${after}\0\xff` : `[${path}/`, `(${path}0`] : [`${prefix}c:${path}`, '(', '+'];
    const members = await (limit > 0 ? redis.zrangebylex(...range, 'LIMIT', 0, limit) : redis.zrangebylex(...range));
    const base = recursive ? '' : `${path}/`;
    const parts = members.map((m) => {
      const cut = m.indexOf('\0');
      return cut < 0 ? entryJson(base + m, undefined) : entryJson(base + m.slice(0, cut), m.slice(cut + 1));
    });
    res.type('application/json').send(`{"path":${JSON.stringify(path)},"recursive":${recursive},"entries":[${parts.join(',')}]}`);
  });
  // The store, for the MCP tools: the files service's bucket on the same S3 server.
  const s3 = process.env.FLOOR_S3 ? (await import('./s3.mjs')).s3Client(JSON.parse(process.env.FLOOR_S3)) : undefined;
  const bucket = process.env.FLOOR_BUCKET;
  const readText = async (user, path) => {
    const raw = await redis.hget(`${keys.prefix(user)}e`, path);
    if (raw === null) return undefined;
    const [size, , sha256, key] = raw.split('|');
    const chunks = [];
    for await (const chunk of await s3.getObject(bucket, key)) chunks.push(chunk);
    return { text: Buffer.concat(chunks).toString('utf8'), size: Number(size), sha256 };
  };
  const tools = {
    read_text_file: async (user, { path }) => {
      const file = await readText(user, path);
      if (!file) return undefined;
      return { path, content: file.text, size: file.size, sha256: file.sha256, mimeType: mimeTypeOf(path) };
    },
    edit_file: async (user, { path, edits }) => {
      const file = await readText(user, path);
      if (!file) return undefined;
      let text = file.text;
      for (const { oldText, newText } of edits) {
        const at = text.indexOf(oldText);
        if (at < 0) return undefined;
        text = text.slice(0, at) + newText + text.slice(at + oldText.length);
      }
      const bytes = Buffer.from(text, 'utf8');
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const key = `bench-floor/${randomUUID()}`;
      await s3.putObject(bucket, key, bytes, bytes.length);
      const entry = { size: bytes.length, mtime: Date.now(), sha256, key, revision: `rev_${randomBytes(16).toString('hex')}` };
      await index.commit(user, { path, mode: 'overwrite', uuidPath: '', entry, uploadId: '', event: event(), quotaBytes: 0, precondition: file.sha256 });
      return { path, size: bytes.length, sha256, revision: entry.revision };
    },
  };
  app.post('/mcp/:user', async (req, res) => {
    const { id, params } = req.body ?? {};
    const tool = tools[params?.name];
    const out = tool && s3 ? await tool(req.params.user, params.arguments ?? {}).catch(() => undefined) : undefined;
    if (!out) return res.json({ jsonrpc: '2.0', id, result: { isError: true, content: [{ type: 'text', text: 'failed' }] } });
    res.json({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out } });
  });

  app.get('/search/:user', async (req, res) => {
    const path = String(req.query.path);
    const literal = String(req.query.q);
    const prefix = keys.prefix(req.params.user);
    const files = [];
    for (const m of await redis.zrangebylex(`${prefix}z`, `[${path}/`, `(${path}0`)) {
      const cut = m.indexOf('\0');
      if (cut >= 0) files.push({ path: m.slice(0, cut), key: m.slice(cut + 1).split('|')[3] });
    }
    const trigrams = literalTrigrams(literal, true);
    const candidates = [];
    for (let i = 0; i < files.length; i += 1_000) {
      const batch = files.slice(i, i + 1_000);
      const summaries = await redis.hmgetBuffer(`${prefix}tri`, ...batch.map((f) => f.key));
      batch.forEach((f, j) => (!summaries[j] || mayContain(summaries[j], trigrams)) && candidates.push(f));
    }
    const matches = [];
    for (let i = 0; i < candidates.length; i += 16) {
      await Promise.all(
        candidates.slice(i, i + 16).map(async (f) => {
          const chunks = [];
          for await (const chunk of await s3.getObject(bucket, f.key)) chunks.push(chunk);
          Buffer.concat(chunks)
            .toString('utf8')
            .split('\n')
            .forEach((line, n) => line.includes(literal) && matches.push({ path: f.path, line: n + 1, text: line }));
        }),
      );
    }
    res.json({ path, matches, filesSearched: files.length, candidates: candidates.length });
  });

  const step = (route, run) =>
    app.post(route, async (req, res) => {
      users.add(req.params.user);
      try {
        res.json((await run(req.params.user, req.body ?? {})) ?? {});
      } catch (err) {
        res.status(409).json({ error: String(err?.message ?? err) });
      }
    });
  step('/move/:user', (user, { from, to }) => index.move(user, { op: 'move', from, to, mode: 'error', uuidPath: '', event: event() }));
  step('/delete/:user', (user, { path }) => index.delete(user, path, true, event()));
  step('/restore/:user', (user, { path }) => index.restoreTree(user, { path, event: event() }));
  step('/checkpoint/:user', (user, { path, checkpointId }) => checkpoints.create(user, { checkpointId, path, label: 'floor', max: 1_000 }));
  step('/uncheckpoint/:user', (user, { checkpointId }) => checkpoints.delete(user, checkpointId));
  step('/rewind/:user', (user, { path, to, checkpointId }) => checkpoints.rewind(user, { path, state: { checkpointId: to }, checkpointId, label: 'floor', max: 1_000, event: event(), to }));

  const server = app.listen(0, '127.0.0.1', () => process.send?.({ msg: 'listening', port: server.address().port }));
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(async () => {
      for (const user of users) await redis.del(outbox.listKey(userTag(user)));
      await redis.quit();
      process.exit(0);
    });
  });
}

/**
 * Starts the files floor on the stack's Redis and index namespace (the files service's
 * S3_BUCKET) → {url, pid, stop()}, or undefined where the bench cannot reach that Redis (a
 * given stack without REDIS_URL, or a Redis Cluster).
 */
export async function startFilesFloor(ctx) {
  const { redisUrl, serviceBucket } = ctx.target;
  if (!redisUrl || !serviceBucket) return undefined;
  const s3 = ctx.target.s3 ? { FLOOR_S3: JSON.stringify(ctx.target.s3) } : {};
  ctx.shared.filesFloor ??= forkServer(import.meta.url, { FLOOR_ROLE: 'files', BENCH_CPU_PROF_NAME: 'floor-files', FLOOR_REDIS_URL: redisUrl, FLOOR_BUCKET: serviceBucket, ...s3, ...(ctx.target.floorEnv ?? {}) }, 'files floor').then((s) => {
    ctx.onCleanup?.(() => s.stop());
    return { url: `http://127.0.0.1:${s.port}`, pid: s.pid, stop: s.stop };
  });
  return ctx.shared.filesFloor;
}
