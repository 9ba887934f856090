// The embedded S3-compatible server (s3rver) for `npm start` and the tests when S3_ENDPOINT is
// unset. Configured by environment: S3RVER_DIRECTORY (required), S3RVER_PORT (default 0, a
// free port), S3RVER_ADDRESS (default 127.0.0.1). Prints one JSON line {"msg":"listening",
// "port":N} once it serves; SIGTERM stops it.
//
// Run it with NODE_OPTIONS=--openssl-legacy-provider: s3rver signs ListObjectsV2 continuation
// tokens with DES, which OpenSSL 3 only offers through its legacy provider. Without it every
// truncated listing (more than max-keys results) fails with a 500.
import { unlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import S3rver from 's3rver';

const require = createRequire(import.meta.url);
const FilesystemStore = require('s3rver/lib/stores/filesystem.js');
const S3Object = require('s3rver/lib/models/object.js');

/**
 * s3rver's delete removes a key's parent directories once they look empty (readdir, then rmdir),
 * racing every concurrent write below them: a PUT that has just created its directory finds it
 * gone when it opens its file, and the unhandled ENOENT of that write stream ends the process
 * (and a delete that loses the race answers 500). Directories are therefore kept: an empty one
 * costs nothing, lists nothing (keys come from files only) and is reused by the next write.
 */
function patchDelete() {
  FilesystemStore.prototype.deleteObject = async function deleteObject(bucket, key) {
    const files = ['object', 'object.md5', 'metadata.json'].map((suffix) => this.getResourcePath(bucket, key, suffix));
    await Promise.all(files.map((file) => unlink(file).catch((err) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)))));
  };
}

/**
 * s3rver's listing walks its directories and stops early, so it (1) drops a "directory" that
 * holds only directories from a delimited listing (it prunes the walk below a common prefix
 * before it saw a key there) and (2) pages in walk order, not key order. Both break what S3
 * guarantees and the files service relies on, so listing is redone here: every key under the
 * prefix, sorted in UTF-8 byte order, then start-after, grouping by the delimiter and max-keys,
 * as S3 does. Metadata is read for the page's objects only, and the sorted keys of the last
 * walk are reused while nothing was written, so the pages of one listing of n keys cost one
 * walk, not one each. (Fine for a development and test server; S3 and MinIO need none of this.)
 */
function patchListing() {
  const walk = FilesystemStore.prototype.listObjects;
  // Every write moves the generation (before and after), so a cached walk is current only
  // while no write started or ended since it began.
  let generation = 0;
  for (const name of ['putObject', 'copyObject', 'deleteObject', 'putObjectMultipart']) {
    const write = FilesystemStore.prototype[name];
    FilesystemStore.prototype[name] = async function (...args) {
      generation++;
      try {
        return await write.apply(this, args);
      } finally {
        generation++;
      }
    };
  }
  let cache;
  const sortedKeys = async (store, bucket, prefix) => {
    if (cache && cache.generation === generation && cache.bucket === bucket && cache.prefix === prefix) return cache.keys;
    const started = generation;
    // The original walk, with metadata left out: only the keys are wanted here.
    const keysOnly = Object.create(store, { getMetadata: { value: async () => ({}) } });
    const { objects } = await walk.call(keysOnly, bucket, { prefix, delimiter: '', startAfter: '', maxKeys: Infinity });
    const keys = objects.map((o) => ({ key: o.key, bytes: Buffer.from(o.key, 'utf8') })).sort((a, b) => Buffer.compare(a.bytes, b.bytes));
    if (started === generation) cache = { generation, bucket, prefix, keys };
    return keys;
  };

  FilesystemStore.prototype.listObjects = async function listObjects(bucket, options) {
    const { delimiter = '', prefix = '', startAfter = '', maxKeys = Infinity } = options;
    const keys = await sortedKeys(this, bucket, prefix);
    const after = Buffer.from(startAfter, 'utf8');
    let lo = 0;
    if (startAfter) {
      // The first key after startAfter, by binary search.
      for (let hi = keys.length; lo < hi; ) {
        const mid = (lo + hi) >>> 1;
        if (Buffer.compare(keys[mid].bytes, after) <= 0) lo = mid + 1;
        else hi = mid;
      }
    }
    // The controller makes the continuation token from the page's last object, so a truncated
    // page ends with an object: trailing prefixes wait for the next page.
    const items = [];
    let lastObject = -1;
    let truncated = false;
    for (let i = lo; i < keys.length; i++) {
      const { key } = keys[i];
      const cut = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
      const group = cut === -1 ? undefined : key.slice(0, cut + delimiter.length);
      if (group !== undefined && (items.at(-1)?.group === group || startAfter.startsWith(group))) continue;
      if (items.length >= maxKeys && lastObject >= 0) {
        truncated = true;
        break;
      }
      items.push(group === undefined ? { key } : { group });
      if (group === undefined) lastObject = items.length - 1;
    }
    const page = truncated ? items.slice(0, lastObject + 1) : items;
    const found = await Promise.all(
      page.filter((i) => i.key !== undefined).map(async ({ key }) => {
        try {
          return new S3Object(bucket, key, null, await this.getMetadata(bucket, key));
        } catch (err) {
          if (err.code === 'ENOENT') return undefined; // deleted since the walk
          throw err;
        }
      }),
    );
    return {
      objects: found.filter((o) => o !== undefined),
      commonPrefixes: page.filter((i) => i.group).map((i) => i.group),
      isTruncated: truncated,
    };
  };
}

patchDelete();
patchListing();

// Whatever else goes wrong in one request must not take the server away from every other client.
process.on('uncaughtException', (err) => console.error(JSON.stringify({ msg: 'uncaught exception', err: String(err?.stack ?? err) })));

const directory = process.env.S3RVER_DIRECTORY;
if (!directory) {
  console.error('S3RVER_DIRECTORY is required');
  process.exit(2);
}
const server = new S3rver({
  directory,
  port: Number(process.env.S3RVER_PORT ?? 0),
  address: process.env.S3RVER_ADDRESS ?? '127.0.0.1',
  silent: true,
});
const { port } = await server.run();
console.log(JSON.stringify({ msg: 'listening', port }));

const stop = async () => {
  // Clients keep idle connections open; close them so close() does not wait for them.
  server.httpServer?.closeAllConnections();
  await server.close();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
