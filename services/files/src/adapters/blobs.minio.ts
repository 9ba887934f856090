import type { IncomingMessage } from 'node:http';
import { errors, type Logger } from '@workspace/platform';
import { Client } from 'minio';
import type { BlobStore, ByteRange } from '../domain/ports.js';
import { guarded, isNotFound, storeError } from './s3-errors.js';

export interface S3Settings {
  /** http(s)://host:port of MinIO or any S3-compatible store. */
  endpoint: string;
  accessKey: string;
  secretKey: string;
  region: string;
  bucket: string;
}

const DELETE_BATCH = 1_000;

export function createS3Client(s3: S3Settings): Client {
  const url = new URL(s3.endpoint);
  const useSSL = url.protocol === 'https:';
  return new Client({
    endPoint: url.hostname,
    port: url.port ? Number(url.port) : useSSL ? 443 : 80,
    useSSL,
    accessKey: s3.accessKey,
    secretKey: s3.secretKey,
    // A known region spares a GetBucketLocation round trip, and lets URLs be presigned offline.
    region: s3.region,
    pathStyle: true,
  });
}

/** Creates the bucket unless it exists (a concurrent replica creating it too is fine). */
export async function ensureBucket(client: Client, bucket: string, region: string): Promise<void> {
  if (await client.bucketExists(bucket)) return;
  try {
    await client.makeBucket(bucket, region);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== 'BucketAlreadyOwnedByYou' && code !== 'BucketAlreadyExists') throw err;
  }
}

/** The key readiness asks for: nothing is ever stored under it (objects live under `b/`). */
const PROBE_KEY = 'health/probe';

/**
 * The store's part of readiness: a GET of one key that holds nothing, at most once per `everyMs`
 * while it answers (the probe runs every 2 s; a bucket HEAD there was a paid request per replica,
 * and a listing-sized one on some stores). NoSuchKey is the healthy answer: the store is there and
 * so is the bucket (NoSuchBucket is not). A failure is asked again at the next probe; requests
 * that meet a store that is down answer 503 meanwhile in any case.
 */
export function storeProbe(client: Client, bucket: string, everyMs: number): () => Promise<void> {
  let checkedAt = -Infinity;
  return async () => {
    if (performance.now() - checkedAt < everyMs) return;
    try {
      (await client.getObject(bucket, PROBE_KEY)).destroy();
    } catch (err) {
      if ((err as { code?: string }).code !== 'NoSuchKey') throw new Error(`the store does not answer for bucket ${bucket}`, { cause: err });
    }
    checkedAt = performance.now();
  };
}

/**
 * Asks the store to abort multipart uploads left incomplete for a day (a crash between the
 * parts and the commit), when the bucket has no lifecycle rules yet: an operator's own rules
 * are never replaced. The sweeper aborts them too; this is the store's own safety net.
 */
export async function ensureAbortRule(client: Client, bucket: string, logger: Logger): Promise<void> {
  try {
    const existing = await client.getBucketLifecycle(bucket).catch((err: { code?: string }) => {
      if (err.code === 'NoSuchLifecycleConfiguration') return null;
      throw err;
    });
    if (existing) return;
    await client.setBucketLifecycle(bucket, {
      Rule: [{ ID: 'workspace-abort-multipart', Status: 'Enabled', Filter: { Prefix: '' }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }],
    });
  } catch (err) {
    logger.info({ err: (err as Error).message }, 'the store keeps no lifecycle rules; the sweeper alone aborts incomplete uploads');
  }
}

/** Immutable objects of one bucket, through the minio client; presigning needs no round trip. */
export class MinioBlobStore implements BlobStore {
  readonly #client: Client;
  readonly #bucket: string;

  constructor(options: { client: Client; bucket: string }) {
    this.#client = options.client;
    this.#bucket = options.bucket;
  }

  presignGet(key: string, seconds: number): Promise<string> {
    return guarded(() => this.#client.presignedUrl('GET', this.#bucket, key, seconds));
  }

  presignPut(key: string, seconds: number): Promise<string> {
    return guarded(() => this.#client.presignedUrl('PUT', this.#bucket, key, seconds));
  }

  presignPart(key: string, multipartId: string, partNumber: number, seconds: number): Promise<string> {
    return guarded(() => this.#client.presignedUrl('PUT', this.#bucket, key, seconds, { partNumber: String(partNumber), uploadId: multipartId }));
  }

  createMultipart(key: string, contentType: string): Promise<string> {
    return guarded(() => this.#client.initiateNewMultipartUpload(this.#bucket, key, { 'Content-Type': contentType }));
  }

  async completeMultipart(key: string, multipartId: string, parts: { partNumber: number; etag: string }[]): Promise<void> {
    const etags = [...parts].sort((a, b) => a.partNumber - b.partNumber).map((p) => ({ part: p.partNumber, etag: p.etag.replace(/^"|"$/g, '') }));
    try {
      await this.#client.completeMultipartUpload(this.#bucket, key, multipartId, etags);
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode ?? 0;
      const code = (err as { code?: string }).code ?? '';
      if ((status >= 400 && status < 500) || ['InvalidPart', 'InvalidPartOrder', 'EntityTooSmall', 'NoSuchUpload'].includes(code)) {
        throw errors.invalidArgument('the uploaded parts do not make a whole file', 'parts');
      }
      throw storeError(err);
    }
  }

  async abortMultipart(key: string, multipartId: string): Promise<void> {
    try {
      await this.#client.abortMultipartUpload(this.#bucket, key, multipartId);
    } catch (err) {
      const code = (err as { code?: string }).code;
      // Gone already; or a store that cannot abort (s3rver answers MethodNotAllowed, and its
      // incomplete parts never become objects).
      if (code === 'NoSuchUpload' || code === 'MethodNotAllowed' || isNotFound(err)) return;
      throw storeError(err);
    }
  }

  put(key: string, bytes: Uint8Array, contentType: string): Promise<void> {
    return guarded(async () => void (await this.#client.putObject(this.#bucket, key, Buffer.from(bytes), bytes.byteLength, { 'Content-Type': contentType })));
  }

  read(key: string, options: { range?: ByteRange; signal?: AbortSignal } = {}): Promise<AsyncIterable<Uint8Array>> {
    return guarded(async () => {
      const { range, signal } = options;
      let res: IncomingMessage;
      try {
        res = (range ? await this.#client.getPartialObject(this.#bucket, key, range.offset, range.length) : await this.#client.getObject(this.#bucket, key)) as IncomingMessage;
      } catch (err) {
        // The index references it, so it must exist: its absence is the store's fault.
        if (isNotFound(err)) throw errors.unavailable('file storage (an object is missing)', err);
        throw err;
      }
      // The listener goes with the read: one kept per read piled up on a search's signal.
      const onAbort = () => res.destroy();
      if (signal?.aborted) res.destroy();
      else signal?.addEventListener('abort', onAbort, { once: true });
      return (async function* () {
        try {
          for await (const chunk of res as AsyncIterable<Uint8Array>) yield chunk;
        } catch (err) {
          throw storeError(err);
        } finally {
          signal?.removeEventListener('abort', onAbort);
          res.destroy();
        }
      })();
    });
  }

  remove(keys: readonly string[]): Promise<void> {
    return guarded(async () => {
      for (let i = 0; i < keys.length; i += DELETE_BATCH) {
        const batch = keys.slice(i, i + DELETE_BATCH);
        if (batch.length === 1) await this.#client.removeObject(this.#bucket, batch[0]!);
        else {
          const failed = (await this.#client.removeObjects(this.#bucket, batch)).find((r) => r?.Error && r.Error.Code !== 'NoSuchKey');
          if (failed?.Error) throw Object.assign(new Error(`delete failed: ${failed.Error.Code}`), { statusCode: 503 });
        }
      }
    });
  }

  async *list(prefix: string): AsyncIterable<{ key: string; size: number; lastModified: Date }> {
    const stream = this.#client.listObjectsV2(this.#bucket, prefix, true);
    try {
      for await (const item of stream as AsyncIterable<{ name?: string; size: number; lastModified: Date }>) {
        if (item.name) yield { key: item.name, size: item.size, lastModified: item.lastModified };
      }
    } catch (err) {
      throw storeError(err);
    }
  }
}
