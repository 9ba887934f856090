// The embedded S3-compatible server (s3rver) for `npm start` and the tests when S3_ENDPOINT is
// unset. Configured by environment: S3RVER_DIRECTORY (required), S3RVER_PORT (default 0, a
// free port), S3RVER_ADDRESS (default 127.0.0.1). Prints one JSON line {"msg":"listening",
// "port":N} once it serves; SIGTERM stops it.
//
// Run it with NODE_OPTIONS=--openssl-legacy-provider: s3rver signs ListObjectsV2 continuation
// tokens with DES, which OpenSSL 3 only offers through its legacy provider. Without it every
// truncated listing (more than max-keys results) fails with a 500.
import { createRequire } from 'node:module';
import S3rver from 's3rver';

/**
 * s3rver's listing walks its directories and stops early, so it (1) drops a "directory" that
 * holds only directories from a delimited listing (it prunes the walk below a common prefix
 * before it saw a key there) and (2) pages in walk order, not key order. Both break what S3
 * guarantees and the files service relies on, so listing is redone here: every key under the
 * prefix, sorted in UTF-8 byte order, then start-after, grouping by the delimiter and max-keys,
 * as S3 does. (Fine for a development and test server; S3 and MinIO need none of this.)
 */
function patchListing() {
  const FilesystemStore = createRequire(import.meta.url)('s3rver/lib/stores/filesystem.js');
  const walkAll = FilesystemStore.prototype.listObjects;
  FilesystemStore.prototype.listObjects = async function listObjects(bucket, options) {
    const { delimiter = '', prefix = '', startAfter = '', maxKeys = Infinity } = options;
    const all = await walkAll.call(this, bucket, { prefix, delimiter: '', startAfter: '', maxKeys: Infinity });
    const bytes = (s) => Buffer.from(s, 'utf8');
    const after = (key) => !startAfter || Buffer.compare(bytes(key), bytes(startAfter)) > 0;
    const sorted = all.objects.sort((a, b) => Buffer.compare(bytes(a.key), bytes(b.key))).filter((o) => after(o.key));
    // The controller makes the continuation token from the page's last object, so a truncated
    // page ends with an object: trailing prefixes wait for the next page.
    const items = [];
    let lastObject = -1;
    let truncated = false;
    for (const object of sorted) {
      const cut = delimiter ? object.key.indexOf(delimiter, prefix.length) : -1;
      const group = cut === -1 ? undefined : object.key.slice(0, cut + delimiter.length);
      if (group !== undefined && (items.at(-1)?.group === group || startAfter.startsWith(group))) continue;
      if (items.length >= maxKeys && lastObject >= 0) {
        truncated = true;
        break;
      }
      items.push(group === undefined ? { object } : { group });
      if (group === undefined) lastObject = items.length - 1;
    }
    const page = truncated ? items.slice(0, lastObject + 1) : items;
    return {
      objects: page.filter((i) => i.object).map((i) => i.object),
      commonPrefixes: page.filter((i) => i.group).map((i) => i.group),
      isTruncated: truncated,
    };
  };
}
patchListing();

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
