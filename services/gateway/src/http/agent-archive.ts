import type { Readable } from 'node:stream';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { errors, isAppError } from '@workspace/platform';

/**
 * Hard bounds on an Agent archive (CONTRACT §12 import), checked against the central directory
 * before a byte is inflated and again while reading (yauzl's validateEntrySizes stops an entry
 * that inflates past its declared size), so a zip bomb, a flood of entries or a huge
 * agent.json is refused in bounded memory.
 */
export interface ArchiveLimits {
  /** agent.json + one entry per distinct knowledge file. */
  maxEntries: number;
  /** agent.json is parsed whole: it must fit in memory comfortably. */
  maxAgentJsonBytes: number;
  maxEntryBytes: number;
  maxTotalBytes: number;
  /** Largest uncompressed/compressed ratio of an entry over 1 MiB (real text deflates ~10×). */
  maxRatio: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxEntries: 4_096,
  maxAgentJsonBytes: 16 * 1024 * 1024,
  maxEntryBytes: 1024 * 1024 * 1024,
  maxTotalBytes: 4 * 1024 * 1024 * 1024,
  maxRatio: 200,
};

const KNOWLEDGE = /^knowledge\/([0-9a-f]{64})$/;
const bad = (why: string) => errors.invalidArgument(`not an Agent archive: ${why}`, 'file');

/** An open archive: agent.json's text and the knowledge entries by sha256. */
export interface AgentArchive {
  agentJson: string;
  knowledge: Map<string, Entry>;
  /** The bytes of a knowledge entry, checked against its declared size as they inflate. */
  open(entry: Entry): Promise<Readable>;
  close(): void;
}

/** Opens and checks the ZIP at `path` (a spooled upload); 400 INVALID_ARGUMENT (field `file`) for anything wrong. */
export async function openAgentArchive(path: string, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<AgentArchive> {
  const zip = await new Promise<ZipFile>((resolve, reject) =>
    yauzl.open(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true }, (err, z) => (err || !z ? reject(bad('it is not a readable ZIP')) : resolve(z))),
  );
  try {
    if (zip.entryCount > limits.maxEntries) throw bad(`more than ${limits.maxEntries} entries`);
    const entries = await listEntries(zip, limits);
    const json = entries.get('agent.json');
    if (!json) throw bad('agent.json is missing');
    const agentJson = (await readAll(await openEntry(zip, json), limits.maxAgentJsonBytes)).toString('utf8');
    const knowledge = new Map<string, Entry>();
    for (const [name, entry] of entries) {
      const sha = KNOWLEDGE.exec(name)?.[1];
      if (sha) knowledge.set(sha, entry);
    }
    return { agentJson, knowledge, open: (entry) => openEntry(zip, entry), close: () => zip.close() };
  } catch (err) {
    zip.close();
    throw err;
  }
}

/** Every entry, checked by name, size and ratio from the central directory alone. */
function listEntries(zip: ZipFile, limits: ArchiveLimits): Promise<Map<string, Entry>> {
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
        if (size > 1024 * 1024 && size / Math.max(1, entry.compressedSize) > limits.maxRatio) throw bad(`entry ${name} is compressed suspiciously well`);
        total += size;
        if (total > limits.maxTotalBytes) throw bad(`more than ${limits.maxTotalBytes} bytes uncompressed`);
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

/** The whole stream, refused beyond `max` bytes (the declared size may lie; yauzl checks it too). */
async function readAll(stream: Readable, max: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      size += (chunk as Buffer).byteLength;
      if (size > max) throw bad(`agent.json is larger than ${max} bytes`);
      parts.push(chunk as Buffer);
    }
  } catch (err) {
    stream.destroy();
    throw isAppError(err) ? err : bad('agent.json is corrupt');
  }
  return Buffer.concat(parts, size);
}
