import type { IncomingMessage } from 'node:http';
import { AppError, type Logger } from '@workspace/platform';
import { Client, CopyDestinationOptions, CopySourceOptions } from 'minio';
import type { ByteRange, ListPage, ObjectStore, StoredObject } from '../domain/ports.js';
import { writeParts } from './part-writer.js';
import { guarded, isNotFound, storeError } from './s3-errors.js';
import { listPage } from './s3-list.js';

export interface S3Settings {
  /** http(s)://host:port of MinIO or any S3-compatible store. */
  endpoint: string;
  accessKey: string;
  secretKey: string;
  region: string;
  bucket: string;
}

/** S3's limit for a single-request copy; larger objects are copied part by part. */
const MAX_SINGLE_COPY = 5 * 1024 ** 3;
const PAGE_SIZE = 1_000;

export function createS3Client(s3: S3Settings): Client {
  const url = new URL(s3.endpoint);
  const useSSL = url.protocol === 'https:';
  return new Client({
    endPoint: url.hostname,
    port: url.port ? Number(url.port) : useSSL ? 443 : 80,
    useSSL,
    accessKey: s3.accessKey,
    secretKey: s3.secretKey,
    // A known region spares a GetBucketLocation round trip before the first call.
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

/**
 * Lets the store clean up after a crash: temporary upload keys (`tmp/`) expire after a day
 * and abandoned multipart uploads are aborted after a day. Only when the bucket has no
 * lifecycle configuration yet (an operator's own rules are never replaced); stores without
 * lifecycle support (s3rver) are fine, the service removes its temporaries itself.
 */
export async function ensureTempExpiry(client: Client, bucket: string, logger: Logger): Promise<void> {
  try {
    const existing = await client.getBucketLifecycle(bucket).catch((err: { code?: string }) => {
      if (err.code === 'NoSuchLifecycleConfiguration') return null;
      throw err;
    });
    if (existing) return;
    await client.setBucketLifecycle(bucket, {
      Rule: [
        { ID: 'workspace-tmp-expiry', Status: 'Enabled', Filter: { Prefix: 'tmp/' }, Expiration: { Days: 1 } },
        { ID: 'workspace-abort-multipart', Status: 'Enabled', Filter: { Prefix: '' }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } },
      ],
    });
  } catch (err) {
    logger.info({ err: (err as Error).message }, 'the store keeps no lifecycle rules; temporary uploads are only removed by the service');
  }
}

/** ObjectStore on one bucket of an S3-compatible server, through the minio client. */
export class MinioObjectStore implements ObjectStore {
  readonly #client: Client;
  readonly #bucket: string;
  readonly #partSize: number;
  readonly #count: (direction: 'in' | 'out', bytes: number) => void;

  /** `onBytes` is told of every body chunk sent to (`in`) or read from (`out`) the store: for metrics. */
  constructor(options: { client: Client; bucket: string; partSize: number; onBytes?: (direction: 'in' | 'out', bytes: number) => void }) {
    this.#client = options.client;
    this.#bucket = options.bucket;
    this.#partSize = options.partSize;
    this.#count = options.onBytes ?? (() => undefined);
  }

  /**
   * A LIST of `key` as prefix with `/` as delimiter, not a HEAD. HEAD would do on S3 and MinIO,
   * but s3rver fails it with a 500 for a key whose last segment is a 255-byte directory name
   * (its own file name limit), which would break the file-above check of every upload below
   * such a directory. The delimiter folds everything below `key/` into one prefix, so the
   * page holds only `key` and its siblings that start with the same characters.
   */
  async stat(key: string): Promise<StoredObject | undefined> {
    for await (const page of this.list(key, { recursive: false })) {
      const found = page.objects.find((o) => o.key === key);
      if (found) return found;
    }
    return undefined;
  }

  async *list(prefix: string, options: { recursive: boolean; firstPageSize?: number }): AsyncIterable<ListPage> {
    let token: string | undefined;
    let maxKeys = Math.min(options.firstPageSize ?? PAGE_SIZE, PAGE_SIZE);
    do {
      const page = await guarded(() =>
        listPage(this.#client, this.#bucket, { prefix, delimiter: options.recursive ? '' : '/', maxKeys, continuationToken: token }),
      );
      maxKeys = PAGE_SIZE;
      token = page.nextToken;
      yield { objects: page.objects, prefixes: page.prefixes };
    } while (token);
  }

  async hasAny(prefix: string): Promise<boolean> {
    const page = await guarded(() => listPage(this.#client, this.#bucket, { prefix, delimiter: '', maxKeys: 1 }));
    return page.objects.length > 0;
  }

  read(key: string, options: { range?: ByteRange | undefined; etag?: string | undefined; signal?: AbortSignal | undefined } = {}): Promise<AsyncIterable<Uint8Array>> {
    return guarded(async () => {
      const { range, etag, signal } = options;
      let res: IncomingMessage;
      try {
        res = (range && (range.offset > 0 || range.length !== undefined)
          ? await this.#client.getPartialObject(this.#bucket, key, range.offset, range.length)
          : await this.#client.getObject(this.#bucket, key)) as IncomingMessage;
      } catch (err) {
        if (isNotFound(err)) throw new AppError('FILE_NOT_FOUND', 'file not found');
        throw err;
      }
      const got = String(res.headers.etag ?? '').replace(/^"|"$/g, '');
      if (etag && got && got !== etag) {
        res.destroy();
        throw new AppError('UNAVAILABLE', 'the file changed while it was being read; retry');
      }
      if (signal) {
        if (signal.aborted) res.destroy();
        else signal.addEventListener('abort', () => res.destroy(), { once: true });
      }
      const count = this.#count;
      return (async function* () {
        try {
          for await (const chunk of res as AsyncIterable<Uint8Array>) {
            count('out', chunk.length);
            yield chunk;
          }
        } finally {
          res.destroy();
        }
      })();
    });
  }

  async write(key: string, body: AsyncIterable<Uint8Array>, options: { contentType: string; commit?: (finish: () => Promise<void>, size: number) => Promise<void> }): Promise<{ size: number }> {
    // The body's own failure (too large, the client went away) and the commit's refusal are the
    // caller's to see as they are; only the store's failures are translated.
    let bodyFailure: { err: unknown } | undefined;
    const { commit } = options;
    const checked = commit
      ? async (finish: () => Promise<void>, size: number) => {
          let finishing = false;
          try {
            await commit(async () => {
              finishing = true;
              await finish();
            }, size);
          } catch (err) {
            if (!finishing) bodyFailure = { err };
            throw err;
          }
        }
      : undefined;
    const count = this.#count;
    const watched = (async function* () {
      try {
        for await (const chunk of body) {
          count('in', chunk.length);
          yield chunk;
        }
      } catch (err) {
        bodyFailure = { err };
        throw err;
      }
    })();
    try {
      return await writeParts({ client: this.#client, bucket: this.#bucket, key, body: watched, partSize: this.#partSize, headers: { 'Content-Type': options.contentType }, commit: checked });
    } catch (err) {
      throw bodyFailure ? bodyFailure.err : storeError(err);
    }
  }

  copy(from: string, to: string, size: number): Promise<void> {
    return guarded(async () => {
      const source = new CopySourceOptions({ Bucket: this.#bucket, Object: from });
      const dest = new CopyDestinationOptions({ Bucket: this.#bucket, Object: to });
      if (size <= MAX_SINGLE_COPY) await this.#client.copyObject(source, dest);
      else await this.#client.composeObject(dest, [source]);
    });
  }

  remove(keys: string[]): Promise<void> {
    return guarded(async () => {
      // Some servers trim whitespace from keys in a multi-delete XML body (s3rver does), so a
      // key ending in white space is deleted on its own, by URL, where nothing trims it.
      const alone = keys.filter((k) => /\s$/u.test(k));
      const batchable = keys.filter((k) => !/\s$/u.test(k));
      for (const key of alone) await this.#client.removeObject(this.#bucket, key);
      for (let i = 0; i < batchable.length; i += PAGE_SIZE) {
        const batch = batchable.slice(i, i + PAGE_SIZE);
        if (batch.length === 1) await this.#client.removeObject(this.#bucket, batch[0]!);
        else await this.#removeBatch(batch);
      }
    });
  }

  /**
   * One multi-delete; if it fails, the keys one by one (deleting is idempotent). Some servers
   * fail a batch whose keys empty a directory concurrently (s3rver deletes in parallel and
   * trips over its own directory cleanup); one at a time they do not.
   */
  async #removeBatch(batch: string[]): Promise<void> {
    try {
      const failed = (await this.#client.removeObjects(this.#bucket, batch)).find((r) => r?.Error && r.Error.Code !== 'NoSuchKey');
      if (!failed?.Error) return;
    } catch {
      // fall through to one at a time
    }
    for (const key of batch) {
      if (await this.stat(key)) await this.#client.removeObject(this.#bucket, key);
    }
  }
}
