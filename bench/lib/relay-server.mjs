// The one-hop floors of the transfer scenarios: one Node process between the client and S3,
// doing nothing but move the bytes. The design puts two Node processes there (files service and
// gateway, with gRPC between them); when even one bare hop stays under a target on this
// machine, no implementation of the design reaches it here.
//
// - GET /?key=… (download-256mib): pipes an S3 GET (the minio client) into the HTTP response.
// - POST /zip (export-1000-files): {bucket?, entries: [{key, name}]} → a STORED ZIP of those
//   objects, read one after another, written into the response as each arrives (zipObjects).
// - POST anything else (upload-256mib, upload-1gib-rss-growth): the gateway's upload request
//   (multipart/form-data, `path` then `file`), parsed with busboy as the gateway does, its file
//   hashed (SHA-256: the contract answers it) and streamed into the bucket under `path` (less
//   its leading `/`) as the gateway sends it (uploadBody): one PUT when it fits in a part, else
//   a multipart upload of `partSize` parts, each PUT to a presigned URL, two at most in flight.
//   Answers {size, sha256}. Not in it: authentication, quota, the files service, the commit.
//
// Prints {"msg":"listening","port":N} (IPC) when it serves.
import http from 'node:http';
import https from 'node:https';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import { forkServer } from './child-server.mjs';

/** Like the gateway's PART_BUFFERS (services/gateway/src/transfer/upload-transfer.ts): parts a body may have in flight at once. */
const PARTS_IN_FLIGHT = 2;
/** How long presigned URLs live; each is used at once. */
const URL_SECONDS = 15 * 60;

if (process.env.RELAY_CHILD === '1') {
  const { s3Client } = await import('./s3.mjs');
  const { default: busboy } = await import('busboy');
  const client = s3Client(JSON.parse(process.env.RELAY_S3 ?? '{}'));
  const bucket = process.env.RELAY_BUCKET;
  const partSize = Number(process.env.RELAY_PART_SIZE);
  // Keep-alive to the store, as the gateway's ObjectStore has.
  const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

  /** PUTs `chunks` (`length` bytes in all) to a presigned URL as they are, no copy; resolves with the ETag. */
  const put = (url, chunks, length) =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      const transport = target.protocol === 'https:' ? https : http;
      const req = transport.request(target, { method: 'PUT', agent: agents[target.protocol], headers: { 'content-length': String(length) } }, (res) => {
        res.resume();
        res.once('end', () => (res.statusCode === 200 && res.headers.etag ? resolve(res.headers.etag) : reject(new Error(`PUT answered ${res.statusCode}`))));
        res.once('error', reject);
      });
      req.once('error', reject);
      for (const chunk of chunks) req.write(chunk);
      req.end();
    });

  /**
   * Streams `file` into `key` as the gateway's sendBody does: bytes gathered up to a part, a
   * full part sent once a byte follows it (so a body of one part is the single PUT), the next
   * part read while one is in flight and reading paused while two are. The parts are the
   * chunks as they came (views, not copies): the least a hop can do with them.
   */
  async function uploadBody(key, file) {
    const hash = createHash('sha256');
    let size = 0;
    let chunks = [];
    let filled = 0;
    let uploadId;
    const inFlight = [];
    const etags = [];
    const sendPart = async () => {
      uploadId ??= await client.initiateNewMultipartUpload(bucket, key, { 'Content-Type': 'application/octet-stream' });
      const part = etags.length + inFlight.length + 1;
      const url = await client.presignedUrl('PUT', bucket, key, URL_SECONDS, { partNumber: String(part), uploadId });
      const sending = put(url, chunks, filled).then((etag) => ({ part, etag: etag.replace(/^"|"$/g, '') }));
      sending.catch(() => undefined); // seen when awaited below
      inFlight.push(sending);
      chunks = [];
      filled = 0;
      if (inFlight.length >= PARTS_IN_FLIGHT) etags.push(await inFlight.shift());
    };
    try {
      for await (const chunk of file) {
        size += chunk.length;
        hash.update(chunk);
        for (let offset = 0; offset < chunk.length; ) {
          if (filled === partSize) await sendPart();
          const n = Math.min(partSize - filled, chunk.length - offset);
          chunks.push(offset === 0 && n === chunk.length ? chunk : chunk.subarray(offset, offset + n));
          filled += n;
          offset += n;
        }
      }
      if (uploadId === undefined) {
        await put(await client.presignedUrl('PUT', bucket, key, URL_SECONDS), chunks, filled);
      } else {
        if (filled > 0) await sendPart();
        while (inFlight.length > 0) etags.push(await inFlight.shift());
        await client.completeMultipartUpload(bucket, key, uploadId, etags);
      }
    } catch (err) {
      if (uploadId !== undefined) await client.abortMultipartUpload(bucket, key, uploadId).catch(() => undefined);
      throw err;
    }
    return { size, sha256: hash.digest('hex') };
  }

  /** The upload request: the form's `path` field names the object, its `file` part is the body. */
  const upload = (req) =>
    new Promise((resolve, reject) => {
      const form = busboy({ headers: req.headers, defParamCharset: 'utf8' });
      const fields = {};
      let started;
      form.on('field', (name, value) => (fields[name] = value));
      form.on('file', (_name, file) => {
        if (started || !fields.path) return void file.resume();
        started = uploadBody(fields.path.replace(/^\/+/, ''), file);
        // A failed upload stops reading the file, so the form would never close: answer now.
        started.catch(reject);
      });
      form.once('close', () => (started ? started.then(resolve, reject) : reject(new Error('no file part after a path'))));
      form.once('error', reject);
      req.pipe(form);
    });

  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://relay');
      if (req.method === 'GET') {
        const key = url.searchParams.get('key') ?? '';
        const stat = await client.statObject(bucket, key);
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': stat.size });
        await pipeline(await client.getObject(bucket, key), res);
      } else if (url.pathname === '/zip') {
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        const order = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200, { 'content-type': 'application/zip' });
        await zipObjects(client, order.bucket ?? bucket, order.entries, res);
        res.end();
      } else {
        const body = JSON.stringify(await upload(req));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      }
    } catch (err) {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(String(err?.message ?? err));
      else res.destroy();
    }
  });
  server.listen(0, '127.0.0.1', () => process.send?.({ msg: 'listening', port: server.address().port }));
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

/**
 * A ZIP of `entries` ({key, name}) of `bucket` written to `out`, nothing else: each object GET
 * one after another and read whole (its CRC goes in its header; the export's objects are small,
 * and the gateway also reads an object of up to 1 MiB whole), then its local header and its
 * bytes as they came, STORED; the central directory and its end last. No ZIP64: this is for at
 * most 65,535 entries and 4 GiB.
 */
async function zipObjects(client, bucket, entries, out) {
  const { zipCentralRecord, zipEnd, zipLocalHeader } = await import('@workspace/testkit');
  const now = new Date();
  const dosTime = (now.getHours() << 11) | (now.getMinutes() << 5) | (now.getSeconds() >> 1);
  const dosDate = ((now.getFullYear() - 1980) << 9) | ((now.getMonth() + 1) << 5) | now.getDate();
  const central = [];
  let offset = 0;
  for (const { key, name } of entries) {
    const parts = [];
    let crc = 0;
    let size = 0;
    for await (const chunk of await client.getObject(bucket, key)) {
      parts.push(chunk);
      crc = crc32(chunk, crc);
      size += chunk.length;
    }
    const fields = { name: Buffer.from(name, 'utf8'), method: 0, crc, compressedSize: size, size, dosTime, dosDate };
    const header = zipLocalHeader(fields);
    // One write of the header and the bytes together (corked): the object is in hand whole anyway.
    out.cork();
    out.write(header);
    for (const part of parts) out.write(part);
    out.uncork();
    if (out.writableNeedDrain) await once(out, 'drain');
    central.push(zipCentralRecord(fields, offset));
    offset += header.length + size;
  }
  const directory = Buffer.concat(central);
  if (!out.write(Buffer.concat([directory, zipEnd(entries.length, directory.length, offset)]))) await once(out, 'drain');
}

/**
 * Starts the relay for `bucket` on the S3 endpoint `s3`, uploads cut into parts of `partSize`
 * (the stack's) → {url, pid, stop()}: GET <url>/?key=… streams that object, POST <url>/zip
 * archives objects, any other POST takes an upload form.
 */
export async function startRelayServer(s3, bucket, partSize) {
  const server = await forkServer(import.meta.url, { RELAY_CHILD: '1', RELAY_S3: JSON.stringify(s3), RELAY_BUCKET: bucket, RELAY_PART_SIZE: String(partSize) }, 'relay server');
  return { url: `http://127.0.0.1:${server.port}`, pid: server.pid, stop: server.stop };
}

/**
 * The run's one relay on the bench's bucket (started at the first call, stopped when the run
 * ends), or undefined without S3 settings.
 */
export async function sharedRelay(ctx) {
  const s3 = await ctx.baselineS3();
  if (!s3 || !ctx.target.s3) return undefined;
  ctx.shared.relay ??= startRelayServer(ctx.target.s3, s3.bucket, ctx.target.partSize).then((relay) => {
    ctx.onCleanup(() => relay.stop());
    return relay;
  });
  return ctx.shared.relay;
}
