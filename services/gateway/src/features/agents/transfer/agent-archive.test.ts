import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import archiver from 'archiver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ARCHIVE_LIMITS, openAgentArchive, type ArchiveLimits } from './agent-archive.js';

const MiB = 1024 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-archive-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
/** A ZIP file of agent.json and knowledge/<sha256> entries (deflated unless `store`). */
async function zipFile(agentJson: Buffer | string, knowledge: Buffer[], options: { store?: boolean } = {}): Promise<string> {
  const path = join(dir, `a${n++}.zip`);
  const archive = archiver('zip', { zlib: { level: 9 } });
  const written = pipeline(archive, createWriteStream(path));
  archive.append(Buffer.from(agentJson), { name: 'agent.json', store: options.store ?? false });
  for (const k of knowledge) archive.append(k, { name: `knowledge/${sha(k)}`, store: options.store ?? false });
  await archive.finalize();
  await written;
  return path;
}

async function refusal(path: string, limits?: ArchiveLimits): Promise<{ code: string; message: string; field: string | undefined }> {
  try {
    const { archive } = await openAgentArchive(path, limits);
    archive.close();
  } catch (err) {
    const e = err as { code: string; message: string; details?: { field?: string } };
    return { code: e.code, message: e.message, field: e.details?.field };
  }
  throw new Error('the archive was accepted');
}

describe('agent archive', () => {
  it('archive — entries that inflate to more than 200× their compressed size are refused, 1 MiB of zeros included', async () => {
    const path = await zipFile('{}', [Buffer.alloc(MiB)]);
    expect(await refusal(path)).toMatchObject({ code: 'INVALID_ARGUMENT', field: 'file', message: expect.stringContaining('more than 200 times its compressed size') });
  });

  it('archive — small entries may compress well, what does not deflate well may be large: accepted', async () => {
    const knowledge = [Buffer.alloc(DEFAULT_ARCHIVE_LIMITS.ratioExemptBytes - 1), Buffer.alloc(32 * 1024, 'a'), randomBytes(2 * MiB), Buffer.from('hello\n')];
    const { archive, agentJson } = await openAgentArchive(await zipFile('{"format":"workspace.agent/v1"}', knowledge));
    try {
      expect(agentJson.toString('utf8')).toBe('{"format":"workspace.agent/v1"}');
      expect([...archive.knowledge.keys()].sort()).toEqual(knowledge.map(sha).sort());
    } finally {
      archive.close();
    }
  });

  it('archive — entries each exempt from the ratio still count towards the archive\'s: all of them together at most maxRatio × its size', async () => {
    const knowledge = Array.from({ length: 50 }, (_, i) => Buffer.concat([Buffer.alloc(60 * 1024), Buffer.from([i])]));
    const path = await zipFile('{}', knowledge);
    const limits = { ...DEFAULT_ARCHIVE_LIMITS, maxRatio: 50 };
    expect(50 * 60 * 1024).toBeGreaterThan(limits.maxRatio * (await stat(path)).size);
    expect(await refusal(path, limits)).toMatchObject({ code: 'INVALID_ARGUMENT', field: 'file', message: expect.stringContaining("more than 50 times the archive's size") });
    // The same entries, stored: nothing is compressed at all.
    const { archive } = await openAgentArchive(await zipFile('{}', knowledge, { store: true }), limits);
    archive.close();
  });

  it('archive — entries that would inflate to more than maxTotalBytes in all are refused', async () => {
    const path = await zipFile('{}', [randomBytes(MiB), randomBytes(MiB)], { store: true });
    expect(await refusal(path, { ...DEFAULT_ARCHIVE_LIMITS, maxTotalBytes: 2 * MiB })).toMatchObject({ field: 'file', message: expect.stringContaining(`more than ${2 * MiB} bytes in all`) });
  });

  it('archive — agent.json is checked as it inflates, as JSON request bodies are: 16 MiB of nested brackets → refused at once; bad UTF-8 and ±Infinity refused', async () => {
    const brackets = Buffer.concat([Buffer.alloc(8 * MiB, '['), Buffer.alloc(8 * MiB, ']')]);
    const started = performance.now();
    expect(await refusal(await zipFile(brackets, [], { store: true }))).toMatchObject({ field: 'file', message: 'not an Agent archive: agent.json is nested deeper than 64 levels' });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(await refusal(await zipFile(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]), []))).toMatchObject({ field: 'file', message: 'not an Agent archive: agent.json must be valid UTF-8' });
    expect(await refusal(await zipFile('{"n":1e400}', []))).toMatchObject({ field: 'file', message: expect.stringContaining('numbers must be finite') });
    expect(await refusal(await zipFile(Buffer.alloc(DEFAULT_ARCHIVE_LIMITS.maxAgentJsonBytes + 1, ' '), [], { store: true }))).toMatchObject({ field: 'file', message: expect.stringContaining('too large') });
  });

  it('archive — an agent.json of millions of tiny values is refused before it is parsed; 16 MiB of text, or of numbers, is read', async () => {
    const tiny = Buffer.concat([Buffer.from('['), Buffer.alloc(3 * 5_000_000, '{},'), Buffer.from('{}]')]);
    expect(await refusal(await zipFile(tiny, [], { store: true }))).toMatchObject({ field: 'file', message: expect.stringContaining('more values than an import takes') });
    const text = Buffer.from(JSON.stringify({ format: 'workspace.agent/v1', configs: [{ instructions: 'é'.repeat(8 * MiB - 100) }] }));
    const numbers = Buffer.concat([Buffer.from('{"n":['), Buffer.alloc(2 * 7 * MiB, '0,'), Buffer.from('0]}')]);
    for (const bytes of [text, numbers]) {
      const { archive, agentJson } = await openAgentArchive(await zipFile(bytes, [], { store: true }));
      archive.close();
      expect(agentJson.byteLength).toBe(bytes.byteLength);
    }
  });
});
