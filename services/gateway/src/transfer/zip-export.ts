import { once } from 'node:events';
import { pipeline, Readable, type TransformCallback } from 'node:stream';
import { deflateRawSync } from 'node:zlib';
import archiver from 'archiver';
import { errors, type Logger } from '@workspace/platform';
import { Coalesce, COALESCE_BYTES } from './coalesce.js';
import { useNativeCrc } from './native-crc.js';

useNativeCrc();

/** One file to archive: its path below the exported folder and where its bytes are. */
export interface ZipItem {
  rel: string;
  /** Presigned GET of the bytes. */
  url: string;
  /** As listed: decides whether the object is read whole before its entry starts. */
  size: number;
  modifiedAt: Date;
}

/** How many objects are opened ahead of the one being archived, so their first bytes are on the way. */
const PREFETCH = 4;
/** An entry whose sample deflate shrinks by less than this is not compressed (media, archives, random data): STORED or deflated at level 0. */
const WORTH_COMPRESSING = 0.9;
const SAMPLE_BYTES = 4 * 1024;
const DEFLATE_LEVEL = 1;
/** A streamed entry's deflate output comes in chunks of this size: each goes on as a write of its own. */
const DEFLATE_CHUNK_BYTES = COALESCE_BYTES;
/** At least this much of an object (or all of it) is read ahead: enough to judge its compressibility. */
const HEAD_BYTES = SAMPLE_BYTES;
/**
 * An object listed at up to this size is read whole before its entry starts, so at most
 * PREFETCH + 2 of them are held at once (read ahead, being appended, still leaving archiver).
 * Its entry is then written in one go, sizes and CRC in its header: no deflate stream, no data
 * descriptor, one write instead of one per chunk.
 */
const WHOLE_BYTES = 1024 * 1024;

/**
 * Bits per byte (Shannon entropy of the byte counts) from which a full sample's bytes are spread
 * as evenly as random ones: 4 KiB of random bytes measure ~7.95, text 4–6. Huffman coding alone
 * saves under 2% there.
 */
const EVEN_BITS = 7.85;
/** Repeated 4-byte strings in a sample past which deflate may find matches (4 KiB of random bytes: almost never one). */
const FEW_REPEATS = 8;
const byteCounts = new Uint16Array(256);
const seenWords = new Int32Array(4096);
const countLog = Float64Array.from({ length: SAMPLE_BYTES + 1 }, (_, n) => (n === 0 ? 0 : n * Math.log2(n)));

/**
 * Whether a full sample looks like random bytes (already compressed or encrypted): its bytes
 * evenly spread and hardly a 4-byte string in it twice, so deflate would find neither skewed
 * counts nor matches. A fifth of the deflate probe's cost; anything else is left to the probe.
 */
function looksRandom(probe: Uint8Array): boolean {
  if (probe.byteLength !== SAMPLE_BYTES) return false;
  byteCounts.fill(0);
  seenWords.fill(0);
  let word = 0;
  let repeats = 0;
  for (let i = 0; i < SAMPLE_BYTES; i++) {
    const byte = probe[i]!;
    byteCounts[byte]!++;
    word = (word << 8) | byte;
    if (i < 3) continue;
    // The last 4 bytes, hashed to a slot that keeps the last word seen there (| 1: never the empty 0, and at worst one more repeat counted).
    const slot = Math.imul(word, 0x9e3779b1) >>> 20;
    if (seenWords[slot] === (word | 1)) repeats++;
    seenWords[slot] = word | 1;
  }
  if (repeats > FEW_REPEATS) return false;
  let sum = 0;
  for (const count of byteCounts) sum += countLog[count]!;
  return Math.log2(SAMPLE_BYTES) - sum / SAMPLE_BYTES >= EVEN_BITS;
}

/** Whether deflating pays for an entry whose first bytes are `sample` (cheap: level 1, at most 4 KiB). */
export function worthCompressing(sample: Uint8Array): boolean {
  if (sample.byteLength < 1024) return true;
  const probe = sample.subarray(0, SAMPLE_BYTES);
  if (looksRandom(probe)) return false;
  return deflateRawSync(probe, { level: 1 }).byteLength < probe.byteLength * WORTH_COMPRESSING;
}

interface Opened {
  item: ZipItem;
  /** The first HEAD_BYTES or more of the object (all of it when `done`: a small object is read whole). */
  head: Buffer;
  done: boolean;
  rest: AsyncIterator<Uint8Array>;
}

async function* followedBy(opened: Opened): AsyncIterable<Uint8Array> {
  if (opened.head.byteLength > 0) yield opened.head;
  if (opened.done) return;
  for (let next = await opened.rest.next(); !next.done; next = await opened.rest.next()) yield next.value;
}

/**
 * The archive's bytes as they leave archiver, gathered into larger writes (Coalesce) and
 * counted: what a STORED entry waits on, as archiver takes a buffer whole whatever its reader's
 * pace (a streamed entry waits on backpressure instead).
 */
class Outflow extends Coalesce {
  /** Bytes taken in from archiver so far. */
  private passed = 0;
  private wanted = Infinity;
  private reached: (() => void) | undefined;

  get bytes(): number {
    return this.passed;
  }

  override _transform(chunk: Buffer, encoding: BufferEncoding, done: TransformCallback): void {
    this.passed += chunk.byteLength;
    if (this.passed >= this.wanted) this.reached?.();
    super._transform(chunk, encoding, done);
  }

  /** Resolves once `bytes` in all have passed (at once if they have), or as `signal` aborts. */
  async reach(bytes: number, signal: AbortSignal): Promise<void> {
    if (this.passed >= bytes || signal.aborted) return;
    let onAbort: () => void = () => undefined;
    try {
      await new Promise<void>((resolve) => {
        onAbort = resolve;
        this.wanted = bytes;
        this.reached = resolve;
        signal.addEventListener('abort', onAbort, { once: true });
      });
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.wanted = Infinity;
      this.reached = undefined;
    }
  }
}

/**
 * archiver strips a leading `word:` from entry names (a guard against Windows drive letters),
 * and does so three times: in its core, in zip-stream, and in compress-commons' entry. A
 * project may well be called `todo:list`, so such a name gets one throwaway `_:` per pass.
 * zip-export.test.ts pins this against the installed archiver.
 */
const STRIPPED_PREFIX = /^\w+:/;
const PASSES = 3;
export function archiverSafeName(name: string): string {
  return STRIPPED_PREFIX.test(name) ? `${'_:'.repeat(PASSES)}${name}` : name;
}

/**
 * A ZIP of `items` (the files under a folder, as the files service lists them), entries named
 * `<rootName>/<rel>`, built while it is read: objects are archived one after another, the next
 * few already opened (PREFETCH) so no request's latency stalls the archive; nothing is
 * assembled in memory or on disk and the first bytes leave before the last object is read.
 * Backpressure from the reader pauses everything. An object of up to WHOLE_BYTES is read whole
 * and, when its first bytes do not compress, STORED with its sizes and CRC in its header; archiver
 * takes such a buffer at once, so the next entry starts only once as many bytes have left it
 * (what is held then is at most the entries' headers not yet read, never their data). A
 * larger one is streamed, and then deflated at level 0 (stored blocks: no compression work,
 * 5 bytes per 64 KiB) rather than STORED: a streamed entry's sizes and CRC come after its data
 * (a data descriptor), and streaming readers such as Java's ZipInputStream refuse that for
 * STORED entries, since only a deflate stream marks its own end ("only DEFLATED entries can
 * have EXT descriptor"). The stream returned gives archiver's small header fields already
 * gathered into larger chunks (Coalesce): pipe it to the response as it is.
 */
export function zipStream(options: {
  items: AsyncIterable<ZipItem>;
  /** The bytes behind a URL; `signal` (aborted when `signal` below is, or the archive closes) stops the read. */
  read: (url: string, signal: AbortSignal) => Promise<AsyncIterable<Uint8Array>>;
  rootName: string;
  logger: Logger;
  signal?: AbortSignal | undefined;
}): Readable {
  // Level 1: exports are mostly streamed to a browser; speed matters more than a few percent.
  // archiver reads its zlib options object (kept by reference down to zip-stream) when an
  // entry starts, and entries are appended one at a time, so the level is set per entry here.
  // Its output in chunks of DEFLATE_CHUNK_BYTES, not zlib's 16 KiB: each chunk costs a zlib
  // callback, a pass down archiver's streams and, smaller than a coalesced write, a write of its own.
  const zlib = { level: DEFLATE_LEVEL, chunkSize: DEFLATE_CHUNK_BYTES };
  const archive = archiver('zip', { zlib });
  const out = new Outflow();
  // Either end closing closes the other: the reader leaving ends the archive, a failure reaches the reader.
  pipeline(archive, out, () => undefined);
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  if (options.signal?.aborted) stop.abort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });

  const open = async (item: ZipItem): Promise<Opened> => {
    // A folder with nothing in it (its name ends in `/`, docs/api/files.md#folders): a directory entry, no bytes.
    if (item.url === '' && item.rel.endsWith('/')) return { item, head: Buffer.alloc(0), done: true, rest: (async function* () {})()[Symbol.asyncIterator]() };
    const rest = (await options.read(item.url, stop.signal))[Symbol.asyncIterator]();
    const parts: Uint8Array[] = [];
    let size = 0;
    let done = false;
    // Past WHOLE_BYTES (an object larger than listed) it is streamed after all.
    const enough = item.size <= WHOLE_BYTES ? WHOLE_BYTES + 1 : HEAD_BYTES;
    while (size < enough) {
      const next = await rest.next();
      if (next.done) {
        done = true;
        break;
      }
      parts.push(next.value);
      size += next.value.byteLength;
    }
    return { item, head: Buffer.concat(parts, size), done, rest };
  };

  void (async () => {
    const ahead: Promise<Opened>[] = [];
    /** What must have left archiver before the next entry starts: all of the last STORED entry's data. */
    let drained = 0;
    try {
      const listing = options.items[Symbol.asyncIterator]();
      let listed = false;
      for (;;) {
        while (!listed && ahead.length < PREFETCH) {
          const next = await listing.next();
          if (next.done) listed = true;
          else {
            const opening = open(next.value);
            opening.catch(() => undefined); // seen when its turn comes (or dropped on abort)
            ahead.push(opening);
          }
        }
        const opening = ahead.shift();
        if (!opening) break;
        const opened = await opening;
        await out.reach(drained, stop.signal);
        stop.signal.throwIfAborted();
        const appended = once(archive, 'entry', { signal: stop.signal });
        const entry = { name: archiverSafeName(`${options.rootName}/${opened.item.rel}`), date: opened.item.modifiedAt };
        const worth = worthCompressing(opened.head);
        if (opened.done) {
          // Whole in memory: archiver knows its sizes and CRC before it writes the header, so an
          // entry not worth deflating is STORED without a data descriptor. So is an empty one,
          // which archiver would otherwise STORE with the descriptor flag of a deflated entry.
          zlib.level = DEFLATE_LEVEL;
          const store = !worth || opened.head.byteLength === 0;
          if (store) drained = out.bytes + opened.head.byteLength;
          archive.append(opened.head, { ...entry, store });
        } else {
          zlib.level = worth ? DEFLATE_LEVEL : 0;
          archive.append(Readable.from(followedBy(opened)), { ...entry, store: false });
        }
        await appended;
      }
      await archive.finalize();
    } catch (err) {
      // Aborted (the caller left, the archive closed) is quiet; anything else is a failure.
      const quiet = stop.signal.aborted;
      stop.abort(); // closes the reads opened ahead
      if (!quiet) options.logger.error({ err }, 'export failed; the archive is cut short');
      archive.abort();
      archive.destroy(quiet ? undefined : errors.unavailable('file storage', err));
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
  })();

  archive.once('close', () => stop.abort());
  return out;
}
