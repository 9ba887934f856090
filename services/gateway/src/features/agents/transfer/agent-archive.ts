import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { errors, isAppError } from '@workspace/platform';
import { JsonTextGuard } from '../../../edge/json-guard.js';

/**
 * Hard bounds on an Agent archive, checked against the central directory before a byte is
 * inflated and again while reading (yauzl's validateEntrySizes stops an entry that inflates
 * past its declared size), so a zip bomb, a flood of entries or a huge agent.json is refused in
 * bounded memory.
 */
export interface ArchiveLimits {
  /** agent.json + one entry per distinct knowledge file. */
  maxEntries: number;
  /** agent.json is parsed whole: it must fit in memory comfortably. */
  maxAgentJsonBytes: number;
  /**
   * And so must what it parses to: a document whose values would take more heap than this
   * (JsonTextGuard's estimate: millions of tiny values) is refused before it is parsed.
   */
  maxAgentJsonParsedBytes: number;
  maxEntryBytes: number;
  /** What every entry together may inflate to. */
  maxTotalBytes: number;
  /**
   * Largest uncompressed/compressed ratio of an entry (real text deflates ~10×, one repeated
   * byte ~1000×), and of the archive as a whole: every entry together inflates to at most
   * this many times the archive's own size (which also defeats entries that share their
   * compressed bytes, whatever each claims).
   */
  maxRatio: number;
  /**
   * Entries smaller than this are exempt from the per-entry ratio (a small file of one repeated
   * byte is harmless); the archive's ratio still counts them.
   */
  ratioExemptBytes: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxEntries: 4_096,
  maxAgentJsonBytes: 16 * 1024 * 1024,
  maxAgentJsonParsedBytes: 128 * 1024 * 1024,
  maxEntryBytes: 1024 * 1024 * 1024,
  maxTotalBytes: 4 * 1024 * 1024 * 1024,
  maxRatio: 200,
  ratioExemptBytes: 64 * 1024,
};

const KNOWLEDGE = /^knowledge\/([0-9a-f]{64})$/;
const bad = (why: string) => errors.invalidArgument(`not an Agent archive: ${why}`, 'file');

/** An open archive: the knowledge entries by sha256. */
export interface AgentArchive {
  knowledge: Map<string, Entry>;
  /** The bytes of a knowledge entry, checked against its declared size as they inflate. */
  open(entry: Entry): Promise<Readable>;
  close(): void;
}

/**
 * Opens and checks the ZIP at `path` (a spooled upload), and reads agent.json's bytes (checked
 * as JSON request bodies are: valid UTF-8, depth, numbers); 400 INVALID_ARGUMENT (field `file`)
 * for anything wrong.
 */
export async function openAgentArchive(path: string, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<{ archive: AgentArchive; agentJson: Buffer }> {
  const archiveBytes = (await stat(path)).size;
  const zip = await new Promise<ZipFile>((resolve, reject) =>
    yauzl.open(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true }, (err, z) => (err || !z ? reject(bad('it is not a readable ZIP')) : resolve(z))),
  );
  try {
    if (zip.entryCount > limits.maxEntries) throw bad(`more than ${limits.maxEntries} entries`);
    const entries = await listEntries(zip, limits, archiveBytes);
    const json = entries.get('agent.json');
    if (!json) throw bad('agent.json is missing');
    const agentJson = await readAgentJson(await openEntry(zip, json), limits);
    const knowledge = new Map<string, Entry>();
    for (const [name, entry] of entries) {
      const sha = KNOWLEDGE.exec(name)?.[1];
      if (sha) knowledge.set(sha, entry);
    }
    return { archive: { knowledge, open: (entry) => openEntry(zip, entry), close: () => zip.close() }, agentJson };
  } catch (err) {
    zip.close();
    throw err;
  }
}

/** Every entry, checked by name, size and ratio from the central directory alone. */
function listEntries(zip: ZipFile, limits: ArchiveLimits, archiveBytes: number): Promise<Map<string, Entry>> {
  return new Promise((resolve, reject) => {
    const entries = new Map<string, Entry>();
    let total = 0;
    zip.on('error', () => reject(bad('its directory is corrupt')));
    zip.on('end', () => resolve(entries));
    zip.on('entry', (entry: Entry) => {
      try {
        const name = entry.fileName;
        if (name.includes('\\') || name.startsWith('/') || name.split('/').some((s) => s === '..' || s === '.')) throw bad(`entry name ${JSON.stringify(name)} is not allowed`);
        if (name === 'knowledge/') return zip.readEntry();
        if (name !== 'agent.json' && !KNOWLEDGE.test(name)) throw bad(`unexpected entry ${JSON.stringify(name)} (only agent.json and knowledge/<sha256>)`);
        if (entries.has(name)) throw bad(`entry ${name} appears twice`);
        if (entry.isEncrypted()) throw bad(`entry ${name} is encrypted`);
        const size = entry.uncompressedSize;
        if (size > (name === 'agent.json' ? limits.maxAgentJsonBytes : limits.maxEntryBytes)) throw bad(`entry ${name} is too large (${size} bytes)`);
        if (size >= limits.ratioExemptBytes && size > limits.maxRatio * entry.compressedSize) throw bad(`entry ${name} would inflate to more than ${limits.maxRatio} times its compressed size`);
        total += size;
        if (total > limits.maxTotalBytes) throw bad(`its entries would inflate to more than ${limits.maxTotalBytes} bytes in all`);
        if (total > limits.maxRatio * archiveBytes) throw bad(`its entries would inflate to more than ${limits.maxRatio} times the archive's size`);
        entries.set(name, entry);
        zip.readEntry();
      } catch (err) {
        reject(err);
      }
    });
    zip.readEntry();
  });
}

function openEntry(zip: ZipFile, entry: Entry): Promise<Readable> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (err, stream) => (err || !stream ? reject(bad(`entry ${entry.fileName} cannot be read`)) : resolve(stream))));
}

/**
 * agent.json's bytes, refused beyond maxAgentJsonBytes (the declared size may lie; yauzl checks
 * it too), and checked as they inflate as every JSON request body is checked (UTF-8, nesting
 * depth, finite numbers) before anything decodes or parses them: a document of nested brackets
 * is refused after its first few bytes, whatever its size. So is one whose values would take
 * more than maxAgentJsonParsedBytes of memory once parsed.
 */
async function readAgentJson(stream: Readable, limits: ArchiveLimits): Promise<Buffer> {
  const parts: Buffer[] = [];
  const guard = new JsonTextGuard('agent.json');
  const tooMany = () => bad(`agent.json holds more values than an import takes (they would take more than ${limits.maxAgentJsonParsedBytes / (1024 * 1024)} MiB once parsed)`);
  let size = 0;
  try {
    for await (const chunk of stream) {
      size += (chunk as Buffer).byteLength;
      if (size > limits.maxAgentJsonBytes) throw bad(`agent.json is larger than ${limits.maxAgentJsonBytes} bytes`);
      const refused = guard.push(chunk as Buffer);
      if (refused) throw bad(refused.message);
      if (guard.estimatedParsedBytes() > limits.maxAgentJsonParsedBytes) throw tooMany();
      parts.push(chunk as Buffer);
    }
    const refused = guard.end();
    if (refused) throw bad(refused.message);
  } catch (err) {
    stream.destroy();
    throw isAppError(err) ? err : bad('agent.json is corrupt');
  }
  return Buffer.concat(parts, size);
}
