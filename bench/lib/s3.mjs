// Direct S3 access for the baselines: the same S3 server as the files service, through the
// minio client, with the bytes streamed from the same temporary files.
import { createReadStream } from 'node:fs';
import { once } from 'node:events';
import { Client } from 'minio';

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

export function s3Client(s3) {
  const url = new URL(s3.endpoint);
  const useSSL = url.protocol === 'https:';
  return new Client({
    endPoint: url.hostname,
    port: Number(url.port || (useSSL ? 443 : 80)),
    useSSL,
    accessKey: s3.accessKey,
    secretKey: s3.secretKey,
    region: s3.region,
    pathStyle: true,
  });
}

export async function ensureBucket(client, bucket, region) {
  if (!(await client.bucketExists(bucket))) await client.makeBucket(bucket, region);
}

async function drain(res) {
  res.resume();
  if (!res.readableEnded) await once(res, 'end');
}

/**
 * One streaming PUT of a file (`size` bytes, SHA-256 `sha256`). minio's putObject would read
 * the whole body into memory first (or, above its part size, list multipart uploads, which
 * s3rver does not implement), so the request is made with the client's own signed stream call.
 */
export async function putFile(client, bucket, key, { path, size, sha256 }) {
  const started = nowMs();
  const res = await client.makeRequestStreamAsync(
    { method: 'PUT', bucketName: bucket, objectName: key, headers: { 'content-length': String(size), 'content-type': 'application/octet-stream' } },
    createReadStream(path, { highWaterMark: 1024 * 1024 }),
    client.enableSHA256 ? sha256 : '',
    [200],
    '',
  );
  await drain(res);
  return { ms: nowMs() - started };
}

/** A small object from memory. */
export async function putBuffer(client, bucket, key, buffer) {
  await client.putObject(bucket, key, buffer, buffer.length);
}

/**
 * The multipart upload the files service does (parts of `partSize`, one in flight while the
 * next is read), straight to S3: separates what S3 costs from what the gateway path adds.
 */
export async function putFileMultipart(client, bucket, key, { path, size }, partSize) {
  const started = nowMs();
  const uploadId = await client.initiateNewMultipartUpload(bucket, key, { 'Content-Type': 'application/octet-stream' });
  const etags = [];
  let inFlight;
  let part = 0;
  let buffer = Buffer.allocUnsafe(partSize);
  let filled = 0;
  const send = (data, partNumber) =>
    client.uploadPart({ bucketName: bucket, objectName: key, uploadID: uploadId, partNumber, headers: { 'Content-Length': String(data.length) } }, data).then((r) => ({ part: partNumber, etag: r.etag }));
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) {
    let offset = 0;
    while (offset < chunk.length) {
      const n = Math.min(partSize - filled, chunk.length - offset);
      chunk.copy(buffer, filled, offset, offset + n);
      filled += n;
      offset += n;
      if (filled === partSize) {
        if (inFlight) etags.push(await inFlight);
        inFlight = send(buffer, ++part);
        buffer = Buffer.allocUnsafe(partSize);
        filled = 0;
      }
    }
  }
  if (inFlight) etags.push(await inFlight);
  if (filled > 0) etags.push(await send(buffer.subarray(0, filled), ++part));
  await client.completeMultipartUpload(bucket, key, uploadId, etags);
  if (etags.length === 0 && size > 0) throw new Error('no parts');
  return { ms: nowMs() - started };
}

/** A GET read to the end; bytes, ms to the first byte and in all. */
export async function getObject(client, bucket, key) {
  const started = nowMs();
  const stream = await client.getObject(bucket, key);
  let ttfbMs;
  let bytes = 0;
  for await (const chunk of stream) {
    ttfbMs ??= nowMs() - started;
    bytes += chunk.length;
  }
  return { bytes, ttfbMs: ttfbMs ?? nowMs() - started, ms: nowMs() - started };
}

/** Every key under `prefix` (recursive LIST), in the server's order. */
export async function listKeys(client, bucket, prefix) {
  const keys = [];
  for await (const item of client.listObjectsV2(bucket, prefix, true)) if (item.name) keys.push({ key: item.name, size: item.size });
  return keys;
}

/**
 * A recursive LIST of `prefix` page by page (1,000 keys each), timed; stops early, incomplete,
 * once `maxSeconds` passed (a slow store re-walks the whole prefix for every page).
 */
export async function timedList(client, bucket, prefix, maxSeconds = Infinity) {
  const started = nowMs();
  const pages = [];
  let count = 0;
  let token = '';
  for (;;) {
    const pageStarted = nowMs();
    const page = await client.listObjectsV2Query(bucket, prefix, token, '', 1000, '');
    pages.push(nowMs() - pageStarted);
    count += page.objects.filter((o) => o.name).length;
    if (!page.isTruncated) return { count, ms: nowMs() - started, pages, complete: true };
    token = page.nextContinuationToken;
    if ((nowMs() - started) / 1000 >= maxSeconds) return { count, ms: nowMs() - started, pages, complete: false };
  }
}
