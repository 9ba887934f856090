import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { useNativeCrc } from './native-crc.js';

describe('export — archiver checksums natively', () => {
  it('export — the crc-32 that archiver loads is patched and gives crc-32’s answers', async () => {
    const { createRequire } = await import('node:module');
    // Its JavaScript, before the patch: a fresh copy of the module, not the one archiver shares.
    const require = createRequire(import.meta.url);
    const path = require.resolve('crc-32', { paths: [require.resolve('archiver')] });
    const modules = useNativeCrc();
    expect(modules.size).toBeGreaterThan(0);
    const shared = require.cache[path];
    delete require.cache[path];
    const js = (require(path) as { buf: (data: unknown, seed?: unknown) => number }).buf;
    require.cache[path] = shared;
    const data = randomBytes(100_003);
    for (const module of modules) {
      expect(module.buf).not.toBe(js);
      // A whole buffer, chunk by chunk with the previous CRC as the seed (signed, as crc-32 returns it, or unsigned), and crc32-stream's first seed: a zeroed Buffer.
      expect(module.buf(data)).toBe(js(data));
      expect(module.buf(data) >>> 0).toBe(crc32(data));
      let signed: number | undefined;
      let unsigned = 0;
      for (let at = 0; at < data.byteLength; at += 7_919) {
        const chunk = data.subarray(at, at + 7_919);
        signed = module.buf(chunk, signed ?? Buffer.alloc(4));
        unsigned = module.buf(chunk, unsigned) >>> 0;
      }
      expect(signed).toBe(js(data));
      expect(unsigned).toBe(crc32(data));
      expect(module.buf([1, 2, 3])).toBe(js([1, 2, 3]));
      expect(module.buf(Buffer.alloc(0))).toBe(0);
    }
    // Idempotent: a second call leaves the first patch in place.
    const first = [...modules].map((m) => m.buf);
    expect([...useNativeCrc()].map((m) => m.buf)).toEqual(first);
  });
});
