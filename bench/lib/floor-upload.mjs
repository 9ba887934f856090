// The floor of upload-small and upload-deep: the least any gateway and files service of this
// design can do per small upload. An Express 5 app with busboy (no authentication, rate limit,
// upload slot, validation, logging or metrics) receives the same multipart request the
// scenarios send and forwards over @grpc/grpc-js to a bare gRPC server in a second process
// (the generated FilesServiceService), which does the files service's Redis work with its own
// adapter classes (services/files/dist), on the stack's Redis and index namespace, for a user
// of its own:
//
// - BeginUpload: the STAT script (is the path a folder?), the PRECHECK script, the pending
//   record (ZADD of the user to the sweep set, then MULTI of HSET and ZADD), and the
//   reservation script of the Content-Length beside the presigned PUT URL (signed offline).
// - The HTTP process hashes the bytes, PUTs them to that URL on the same S3 server (into the
//   bench's own bucket) over a keep-alive connection, and summarizes them for content search.
// - CommitUpload: HGET of the pending record, then the index's COMMIT script (one EVALSHA,
//   sent with the ZADDs that register the user with the relay, the sweeper and the retention).
//
// Only bodies that fit in one part (one PUT) are taken: the scenarios' files are 4 KiB. Its
// events go to an outbox of its own namespace, which no relay drains; when it stops it deletes
// that outbox, the user's index keys and the objects it stored.
// Prints {"msg":"listening","port":N} (IPC) when it serves. startUploadFloor() starts it.
import http from 'node:http';
import https from 'node:https';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { forkServer } from './child-server.mjs';

const role = process.env.FLOOR_ROLE;
/** The gateway's deadline of these calls is longer; any will do, as long as each call has one, as the gateway's do. */
const DEADLINE_MS = 30_000;
/** The metadata the gateway names the user in (packages/platform grpc/context.ts MD_USER_ID). */
const MD_USER_ID = 'x-user-id-bin';
/** OnConflict of the proto by the form's `onConflict`. */
const ON_CONFLICT = { error: 1, overwrite: 2, uuid: 3 };

if (role === 'grpc') {
  const grpc = await import('@grpc/grpc-js');
  const { FilesServiceService } = await import('@workspace/proto/workspace/files/v1/files');
  const { createRedis, RedisOutbox, tenantKey, userTag } = await import('@workspace/platform');
  const { listKeys, s3Client } = await import('./s3.mjs');
  const dist = (p) => new URL(`../../services/files/dist/${p}`, import.meta.url).href;
  const { IndexKeys, RedisFileIndex } = await import(dist('adapters/index.redis.js'));
  const { MinioBlobStore } = await import(dist('adapters/blobs.minio.js'));
  const { mimeTypeOf } = await import(dist('domain/media-types.js'));
  const { eventTemplate } = await import(dist('domain/events.js'));
  const { newObjectKey, newRevision } = await import(dist('domain/uploads.js'));
  // The files service's defaults (services/files/src/config.ts), which the launched stack keeps.
  const MAX_UPLOAD_BYTES = 5 * 1024 ** 3;
  const QUOTA_BYTES = 10 * 1024 ** 3;
  const PENDING_MS = 3_600_000;
  const SUMMARY_MAX_BYTES = 1024 ** 2;
  const partSize = Number(process.env.FLOOR_PART_SIZE);
  const modes = ['error', 'error', 'overwrite', 'uuid'];

  const redis = createRedis({ url: process.env.FLOOR_REDIS_URL });
  const keys = new IndexKeys(process.env.FLOOR_BUCKET);
  const outbox = new RedisOutbox({ redis, namespace: `bench-floor-${randomBytes(6).toString('hex')}` });
  const index = new RedisFileIndex({ redis, keys, outbox });
  const bucket = process.env.FLOOR_S3_BUCKET;
  const s3 = s3Client(JSON.parse(process.env.FLOOR_S3));
  const blobs = new MinioBlobStore({ client: s3, bucket });
  const users = new Set();

  /** The service's destination rule: no path → /files/<filename>; a folder (or `dir/`) → <dir>/<filename>. */
  const destination = async (user, path, filename) => {
    if (path === undefined) return `/files/${filename}`;
    if (path.endsWith('/')) return `${path}${filename}`;
    const [found] = await index.stat(user, [path]);
    return found === 'directory' ? `${path}/${filename}` : path;
  };
  const begin = async (user, request) => {
    const mode = modes[request.onConflict] ?? 'error';
    const path = await destination(user, request.path, request.filename);
    await index.precheck(user, path, mode, QUOTA_BYTES, '');
    const uploadId = `up_${randomBytes(16).toString('hex')}`;
    // The scenarios upload with onConflict=error: no uuid sibling is worked out.
    const upload = { key: newObjectKey(user), path, mode, uuidPath: '', mimeType: mimeTypeOf(path.slice(path.lastIndexOf('/') + 1)) };
    await index.addUpload(user, uploadId, upload, Date.now() + PENDING_MS);
    const hint = Math.min(Number(request.reserveHint) || 0, MAX_UPLOAD_BYTES);
    const [putUrl] = await Promise.all([blobs.presignPut(upload.key, PENDING_MS / 1000), hint > 0 && index.reserveUpload(user, [{ id: uploadId, totalBytes: hint }], QUOTA_BYTES)]);
    return { uploadId, path, putUrl, partSize, maxBytes: MAX_UPLOAD_BYTES, reservedBytes: hint, summaryMaxBytes: SUMMARY_MAX_BYTES };
  };
  const commit = async (user, { uploadId, size, sha256, summary }) => {
    const upload = await index.getUpload(user, uploadId);
    if (!upload) throw new Error('the upload is gone');
    const entry = { size, mtime: Date.now(), sha256, key: upload.key, revision: newRevision() };
    const event = eventTemplate(user, upload.path);
    const done = await index.commit(user, { path: upload.path, mode: upload.mode, uuidPath: upload.uuidPath, entry, uploadId, event, quotaBytes: QUOTA_BYTES, precondition: '', summary });
    return { path: done.path, size, mimeType: upload.mimeType, sha256, revision: entry.revision };
  };

  /** A unary handler of `run(user, request)`; any failure is UNAVAILABLE with its message (the HTTP side only passes it on). */
  const unary = (run) => (call, callback) => {
    const user = Buffer.from(call.metadata.get(MD_USER_ID)[0] ?? '').toString('utf8');
    users.add(user);
    run(user, call.request).then(
      (out) => callback(null, out),
      (err) => callback({ code: grpc.status.UNAVAILABLE, details: `${err?.code ?? 'ERROR'}: ${err?.message ?? err}` }),
    );
  };
  const unimplemented = (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED });
  const impl = Object.fromEntries(Object.keys(FilesServiceService).map((name) => [name, unimplemented]));
  impl.beginUpload = unary(begin);
  impl.commitUpload = unary(commit);
  const server = new grpc.Server();
  server.addService(FilesServiceService, impl);
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) throw err;
    process.send?.({ msg: 'listening', port });
  });

  /** Everything a user of the floor left: its index keys (found by their prefix), its outbox list, its markers in the stack's sets, its objects. */
  const dropUser = async (user) => {
    const tag = userTag(user);
    for await (const found of redis.scanStream({ match: `${keys.prefix(user)}*`, count: 1000 })) if (found.length > 0) await redis.unlink(...found);
    await redis.multi().del(outbox.listKey(tag)).zrem(keys.sweep, tag).zrem(keys.retain, tag).exec();
    const objects = await listKeys(s3, bucket, `b/${tenantKey(user)}/`);
    for (let i = 0; i < objects.length; i += 1000) await s3.removeObjects(bucket, objects.slice(i, i + 1000).map((o) => o.key));
  };
  process.on('SIGTERM', () =>
    server.tryShutdown(async () => {
      try {
        for (const user of users) await dropUser(user);
        await redis.del(outbox.pendingKey);
        await redis.quit();
      } catch (err) {
        console.error(`upload floor cleanup: ${err?.message ?? err}`);
      }
      process.exit(0);
    }),
  );
}

if (role === 'http') {
  const { default: express } = await import('express');
  const { default: busboy } = await import('busboy');
  const grpc = await import('@grpc/grpc-js');
  const { FilesServiceService } = await import('@workspace/proto/workspace/files/v1/files');
  const { summaryWithin } = await import('@workspace/platform');
  const client = new grpc.Client(`127.0.0.1:${process.env.FLOOR_GRPC_PORT}`, grpc.credentials.createInsecure());
  const user = Buffer.from(process.env.FLOOR_USER ?? '', 'utf8');
  const unary = (method, request) => {
    const metadata = new grpc.Metadata();
    metadata.set(MD_USER_ID, user);
    return new Promise((resolve, reject) =>
      client.makeUnaryRequest(method.path, method.requestSerialize, method.responseDeserialize, request, metadata, { deadline: Date.now() + DEADLINE_MS }, (err, out) => (err ? reject(err) : resolve(out))),
    );
  };
  // Keep-alive connections to the store, as the gateway's ObjectStore keeps them.
  const agents = { 'http:': new http.Agent({ keepAlive: true, scheduling: 'lifo' }), 'https:': new https.Agent({ keepAlive: true, scheduling: 'lifo' }) };
  /** PUTs `body` to a presigned URL; resolves with the store's ETag. */
  const put = (url, body) =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      const transport = target.protocol === 'https:' ? https : http;
      const req = transport.request(target, { method: 'PUT', agent: agents[target.protocol], headers: { 'Content-Length': body.length } }, (res) => {
        res.resume();
        if (res.statusCode === 200 && res.headers.etag) resolve(res.headers.etag);
        else reject(new Error(`PUT answered ${res.statusCode}`));
      });
      req.on('error', reject);
      req.end(body);
    });

  /**
   * Reads the form until its file part starts: resolves with the fields before it, the file
   * name, the file's bytes (a promise) and the form's end (a promise: the closing delimiter).
   */
  const readForm = (req) =>
    new Promise((resolve, reject) => {
      const fields = {};
      const parser = busboy({ headers: req.headers });
      const done = new Promise((ok, fail) => parser.on('close', ok).on('error', fail));
      done.then(() => reject(new Error('the "file" part is missing')), reject);
      parser.on('field', (name, value) => {
        fields[name] = value;
      });
      parser.on('file', (_name, stream, info) => {
        const chunks = [];
        stream.on('data', (chunk) => chunks.push(chunk));
        const bytes = new Promise((ok, fail) => stream.on('end', () => ok(Buffer.concat(chunks))).on('error', fail));
        // Observed through Promise.all below; a failure of the other side first must not leave it unhandled.
        bytes.catch(() => undefined);
        resolve({ fields, filename: info.filename ?? '', bytes, done });
      });
      req.pipe(parser);
    });

  const app = express();
  app.post('/v1/agent/files/upload', async (req, res) => {
    try {
      const form = await readForm(req);
      const begin = unary(FilesServiceService.beginUpload, {
        path: form.fields.path,
        filename: form.filename,
        onConflict: ON_CONFLICT[form.fields.onConflict ?? 'error'] ?? ON_CONFLICT.error,
        idleMs: 0,
        // The whole body's length bounds the file's: reserved with the begin, as the gateway does.
        reserveHint: Number(req.headers['content-length']) || 0,
        ifNoneMatch: false,
      });
      const [begun, body] = await Promise.all([begin, form.bytes]);
      if (body.length > begun.partSize) throw new Error('the floor sends bodies of one part only');
      const sha256 = createHash('sha256').update(body).digest('hex');
      await put(begun.putUrl, body);
      const summary = summaryWithin(body, begun.summaryMaxBytes) ?? Buffer.alloc(0);
      await form.done;
      const stored = await unary(FilesServiceService.commitUpload, { uploadId: begun.uploadId, size: body.length, sha256, parts: [], summary });
      res.json({ success: true, path: stored.path, size: stored.size, mimeType: stored.mimeType, sha256: stored.sha256 });
    } catch (err) {
      res.status(503).json({ error: { message: String(err?.details ?? err?.message ?? err) } });
    }
  });
  const server = app.listen(0, '127.0.0.1', () => process.send?.({ msg: 'listening', port: server.address().port }));
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => {
      client.close();
      process.exit(0);
    });
  });
}

/**
 * Starts the upload floor (gRPC server, then the HTTP process in front of it) on the stack's
 * Redis and index namespace, storing into the bench's own bucket, once per run; stopped when
 * the run ends. → {url, pids: {'floor-http', 'floor-grpc'}, stop()}, or undefined where the
 * bench cannot reach that Redis (a given stack without REDIS_URL, a Redis Cluster) or has no S3.
 */
export async function startUploadFloor(ctx) {
  const { redisUrl, serviceBucket, s3 } = ctx.target;
  if (!redisUrl || !serviceBucket || !s3) return undefined;
  ctx.shared.uploadFloor ??= (async () => {
    const store = await ctx.baselineS3();
    const profiling = ctx.target.floorEnv ?? {};
    const backend = await forkServer(
      import.meta.url,
      { FLOOR_ROLE: 'grpc', BENCH_CPU_PROF_NAME: 'floor-upload-grpc', FLOOR_REDIS_URL: redisUrl, FLOOR_BUCKET: serviceBucket, FLOOR_S3: JSON.stringify(s3), FLOOR_S3_BUCKET: store.bucket, FLOOR_PART_SIZE: String(ctx.target.partSize), ...profiling },
      'upload floor gRPC server',
    );
    let front;
    try {
      front = await forkServer(import.meta.url, { FLOOR_ROLE: 'http', BENCH_CPU_PROF_NAME: 'floor-upload-http', FLOOR_GRPC_PORT: String(backend.port), FLOOR_USER: `bench-floor-upload-${randomUUID()}`, ...profiling }, 'upload floor HTTP server');
    } catch (err) {
      await backend.stop();
      throw err;
    }
    const stop = async () => {
      await front.stop();
      await backend.stop();
    };
    ctx.onCleanup?.(stop);
    return { url: `http://127.0.0.1:${front.port}`, pids: { 'floor-http': front.pid, 'floor-grpc': backend.pid }, stop };
  })();
  return ctx.shared.uploadFloor;
}
