/**
 * Trigram summaries of file contents (docs/api/files.md#search): a Bloom filter of the content's
 * folded byte trigrams, so a search reads only the files that may hold its query (Russ Cox,
 * "Regular Expression Matching with a Trigram Index"). A summary never decides a match: it
 * only rules files out, and only when a trigram the query needs is certainly absent.
 *
 * Folding makes one summary serve case-sensitive and case-insensitive queries: ASCII letters
 * are lowercased, and the two non-ASCII characters whose simple case folding reaches ASCII
 * (U+212A KELVIN SIGN → k, U+017F LATIN SMALL LETTER LONG S → s) become that letter. Other bytes
 * stay as they are, so a case-insensitive query may use only its all-ASCII trigrams.
 *
 * Layout: byte 0 = flags (TEXT: the content is valid UTF-8), then the filter (absent for
 * content that is not text: such a file is never searched).
 *
 * Shared: the gateway summarizes an upload's bytes as they pass and sends the summary with the
 * commit; the files service summarizes what it has to read itself (a file committed without one).
 */
import { isUtf8 } from 'node:buffer';

export const SUMMARY_TEXT = 1;
/** Filter bits per distinct trigram: with two hash functions about 15% of absent trigrams pass. */
const BITS_PER_TRIGRAM = 4;
const MIN_FILTER_BYTES = 64;
/** A larger content's filter saturates toward "maybe" (still exact: it only passes more files). */
const MAX_FILTER_BYTES = 64 * 1024;

/** The content's bytes folded as described above (a new array only when something changes length). */
export function foldBytes(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b >= 0x41 && b <= 0x5a) out[n++] = b + 0x20;
    else if (b === 0xe2 && bytes[i + 1] === 0x84 && bytes[i + 2] === 0xaa) {
      out[n++] = 0x6b;
      i += 2;
    } else if (b === 0xc5 && bytes[i + 1] === 0xbf) {
      out[n++] = 0x73;
      i += 1;
    } else out[n++] = b;
  }
  return n === out.length ? out : out.subarray(0, n);
}

function hash1(t: number): number {
  return Math.imul(t, 0x9e3779b1) >>> 0;
}

function hash2(t: number): number {
  const h = Math.imul(t ^ (t >>> 13), 0x85ebca6b);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * One bit per possible trigram (2^24 bits, 2 MiB), allocated at the first summary and kept: the
 * distinct trigrams of a content are found with a bit test each, and the bits set are cleared
 * again before `summarize` returns (it runs to completion, so no other call sees them).
 */
let seen: Uint8Array | undefined;
let found = new Uint32Array(4096);

/** The distinct folded trigrams of `folded`, in order of first appearance (a view, valid until the next call). */
function distinctTrigrams(folded: Uint8Array): Uint32Array {
  seen ??= new Uint8Array(1 << 21);
  let n = 0;
  for (let i = 0; i + 2 < folded.length; i++) {
    const t = (folded[i]! << 16) | (folded[i + 1]! << 8) | folded[i + 2]!;
    const bit = 1 << (t & 7);
    if ((seen[t >>> 3]! & bit) !== 0) continue;
    seen[t >>> 3]! |= bit;
    if (n === found.length) {
      const grown = new Uint32Array(found.length * 2);
      grown.set(found);
      found = grown;
    }
    found[n++] = t;
  }
  // Every bit set in a byte belongs to a trigram of the list: clearing whole bytes clears exactly them.
  for (let j = 0; j < n; j++) seen[found[j]! >>> 3] = 0;
  return found.subarray(0, n);
}

/** The summary of a content (`text`: whether it is valid UTF-8), as a Buffer: it goes to gRPC and Redis as is. */
export function summarize(bytes: Uint8Array, text: boolean): Buffer {
  if (!text) return Buffer.of(0);
  const distinct = distinctTrigrams(foldBytes(bytes));
  let size = MIN_FILTER_BYTES;
  while (size < MAX_FILTER_BYTES && size * 8 < distinct.length * BITS_PER_TRIGRAM) size *= 2;
  const out = Buffer.alloc(1 + size);
  out[0] = SUMMARY_TEXT;
  const mask = size * 8 - 1;
  for (let j = 0; j < distinct.length; j++) {
    const t = distinct[j]!;
    const a = hash1(t) & mask;
    const b = hash2(t) & mask;
    out[1 + (a >>> 3)]! |= 1 << (a & 7);
    out[1 + (b >>> 3)]! |= 1 << (b & 7);
  }
  return out;
}

/**
 * The most bytes the summary of a content of `contentBytes` bytes can take: its distinct
 * trigrams are fewer than its bytes, so its filter is at most the size summarize() would pick
 * for that many. Lets a reader bound what a batch of summaries weighs before fetching it.
 */
export function summaryBytesAtMost(contentBytes: number): number {
  let size = MIN_FILTER_BYTES;
  while (size < MAX_FILTER_BYTES && size * 8 < Math.max(0, contentBytes - 2) * BITS_PER_TRIGRAM) size *= 2;
  return 1 + size;
}

/** The summary of a content, deciding whether it is text (valid UTF-8). */
export function summarizeContent(bytes: Uint8Array): Buffer {
  return summarize(bytes, isUtf8(bytes));
}

/** The summary of a content of at most `maxBytes` (SEARCH_MAX_FILE_BYTES; 0: none is wanted), else undefined. */
export function summaryWithin(bytes: Uint8Array, maxBytes: number): Buffer | undefined {
  return maxBytes > 0 && bytes.byteLength <= maxBytes ? summarizeContent(bytes) : undefined;
}

/**
 * Whether `summary` has the shape `summarize` gives: one flags byte (0, not text), or TEXT then
 * a filter of a power of two bytes from MIN_FILTER_BYTES to MAX_FILTER_BYTES. A summary from
 * elsewhere is checked before it is stored: a wrong one would rule out files that match.
 */
export function validSummary(summary: Uint8Array): boolean {
  if (summary.length === 1) return summary[0] === 0;
  const size = summary.length - 1;
  return summary[0] === SUMMARY_TEXT && size >= MIN_FILTER_BYTES && size <= MAX_FILTER_BYTES && (size & (size - 1)) === 0;
}

/** Whether the summarized content is valid UTF-8 (only such files are searched). */
export function isTextSummary(summary: Uint8Array): boolean {
  return summary.length > 0 && (summary[0]! & SUMMARY_TEXT) !== 0;
}

/** Whether the content may hold every trigram (false: certainly not; then it cannot match). */
export function mayContain(summary: Uint8Array, trigrams: readonly number[]): boolean {
  const size = summary.length - 1;
  if (size <= 0) return trigrams.length === 0;
  const mask = size * 8 - 1;
  for (const t of trigrams) {
    const a = hash1(t) & mask;
    const b = hash2(t) & mask;
    if ((summary[1 + (a >>> 3)]! & (1 << (a & 7))) === 0 || (summary[1 + (b >>> 3)]! & (1 << (b & 7))) === 0) return false;
  }
  return true;
}

/**
 * The folded trigrams every match of the literal `text` contains. Case-insensitive: only the
 * trigrams of three ASCII bytes (a non-ASCII character may match another spelling).
 */
export function literalTrigrams(text: string, caseSensitive: boolean): number[] {
  const folded = foldBytes(Buffer.from(text, 'utf8'));
  const out = new Set<number>();
  for (let i = 0; i + 2 < folded.length; i++) {
    const [a, b, c] = [folded[i]!, folded[i + 1]!, folded[i + 2]!];
    if (!caseSensitive && (a | b | c) >= 0x80) continue;
    out.add((a << 16) | (b << 8) | c);
  }
  return [...out];
}
