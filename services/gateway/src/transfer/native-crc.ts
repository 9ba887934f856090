import { createRequire } from 'node:module';
import { crc32 } from 'node:zlib';

/** What crc-32 exports and archiver's ZIP writer calls: the CRC-32 of `data` continuing `seed` (a previous CRC), signed. */
interface Crc32Module {
  buf: (data: unknown, seed?: unknown) => number;
}

/**
 * The crc-32 module instances that archiver's ZIP writer checksums with: compress-commons (the
 * whole of a buffer entry) and crc32-stream (every chunk of a streamed one), resolved as they
 * resolve it.
 */
function archiverCrcModules(): Set<Crc32Module> {
  try {
    const fromArchiver = createRequire(createRequire(import.meta.url).resolve('archiver'));
    const fromZipStream = createRequire(fromArchiver.resolve('zip-stream'));
    const fromCommons = createRequire(fromZipStream.resolve('compress-commons'));
    const fromCrcStream = createRequire(fromCommons.resolve('crc32-stream'));
    return new Set([fromCommons('crc-32') as Crc32Module, fromCrcStream('crc-32') as Crc32Module]);
  } catch {
    // Laid out otherwise (another archiver): its own CRC stays; native-crc.test.ts says so.
    return new Set();
  }
}

const NATIVE = Symbol('native crc32');

/**
 * Has archiver's ZIP writer compute its CRCs with Node's zlib.crc32 (native, ~3× the speed of
 * crc-32's JavaScript, which was ~15% of the ZIP writer's CPU) instead. The same CRC-32: crc-32's
 * `buf` is replaced on its module object, which its callers read at every call; input that is
 * not bytes (crc-32 also takes arrays) keeps the JavaScript. Idempotent. Returns the
 * modules patched, for the test that pins this to the installed archiver.
 */
export function useNativeCrc(): Set<Crc32Module> {
  const modules = archiverCrcModules();
  for (const module of modules) {
    const js = module.buf;
    if ((js as { [NATIVE]?: true })[NATIVE]) continue;
    // crc-32 takes the seed as a number (a previous CRC, signed or not) and reads anything else as 0.
    const native = (data: unknown, seed?: unknown): number =>
      data instanceof Uint8Array ? crc32(data, typeof seed === 'number' ? seed >>> 0 : 0) | 0 : js(data, seed);
    module.buf = Object.assign(native, { [NATIVE]: true as const });
  }
  return modules;
}
