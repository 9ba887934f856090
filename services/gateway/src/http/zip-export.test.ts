import archiver from 'archiver';
import { describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { archiverSafeName } from './zip-export.js';

async function zipNames(names: string[]): Promise<{ name: string; utf8: boolean }[]> {
  const archive = archiver('zip');
  const chunks: Buffer[] = [];
  archive.on('data', (c: Buffer) => chunks.push(c));
  for (const name of names) archive.append(Buffer.from('x'), { name: archiverSafeName(name) });
  await archive.finalize();
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(Buffer.concat(chunks), { lazyEntries: false }, (err, zip) => {
      if (err || !zip) return reject(err);
      const out: { name: string; utf8: boolean }[] = [];
      zip.on('entry', (e: yauzl.Entry) => out.push({ name: e.fileName, utf8: (e.generalPurposeBitFlag & 0x800) !== 0 }));
      zip.on('end', () => resolve(out));
      zip.on('error', reject);
    });
  });
}

describe('zip export', () => {
  it('export — entry names reach the archive exactly, drive-letter look-alikes and UTF-8 included', async () => {
    const names = ['todo:list/a.md', 'Cx:/x', 'ab:c:d/e', 'Plan: Q3/x', 'plain/file.txt', 'Plan 研究/ノート.md', ' spaced: name/x', '_:/y'];
    const got = await zipNames(names);
    expect(got.map((e) => e.name)).toEqual(names);
    expect(got.find((e) => e.name === 'Plan 研究/ノート.md')?.utf8).toBe(true);
  });
});

describe('export — compression', () => {
  it('export — text is worth deflating; random bytes and tiny samples are decided without fuss', async () => {
    const { randomBytes } = await import('node:crypto');
    const { worthCompressing } = await import('./zip-export.js');
    expect(worthCompressing(Buffer.from('the same words again and again. '.repeat(2048)))).toBe(true);
    expect(worthCompressing(randomBytes(64 * 1024))).toBe(false);
    expect(worthCompressing(randomBytes(4 * 1024))).toBe(false);
    expect(worthCompressing(randomBytes(200))).toBe(true);
  });
});
