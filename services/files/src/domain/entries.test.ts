import { describe, expect, it } from 'vitest';
import { decodeEntry, decodeRecord, encodeEntry, entryJson, fileEntry } from './entries.js';

const SHA = 'ab'.repeat(32);

describe('entries', () => {
  it('entry json — files carry sha256 with their stats; directories and includeStats=false carry none; any name is valid JSON', () => {
    const entry = { size: 3, mtime: Date.UTC(2024, 4, 1, 12), sha256: SHA, key: 'b/x/y', revision: 'rev_1' };
    const path = '/files/a "q"\\ é.md';
    expect(JSON.parse(entryJson(path, entry, true))).toEqual({ ...fileEntry(path, entry) });
    expect(JSON.parse(entryJson(path, entry, true))).toEqual({ path: '/files/a "q"\\ é.md', name: 'a "q"\\ é.md', type: 'file', size: 3, modifiedAt: '2024-05-01T12:00:00.000Z', mimeType: 'text/markdown', sha256: SHA });
    expect(JSON.parse(entryJson(path, entry, false))).toEqual({ path: '/files/a "q"\\ é.md', name: 'a "q"\\ é.md', type: 'file' });
    expect(JSON.parse(entryJson('/files/d\u2028', undefined, true))).toEqual({ path: '/files/d\u2028', name: 'd\u2028', type: 'directory' });
  });

  it('entries — the index form round-trips', () => {
    const e = { size: 5_368_709_120, mtime: 1, sha256: SHA, key: 'b/t/k', revision: 'rev_x' };
    expect(decodeEntry(encodeEntry(e))).toEqual(e);
  });

  it('history records — a content record and a deletion (which carries the last content) decode from the Lua form', () => {
    expect(decodeRecord(`rev_a|0|10|3|${SHA}|b/t/k|20|`)).toEqual({ revision: 'rev_a', deleted: false, mtime: 10, size: 3, sha256: SHA, key: 'b/t/k', recordedAt: 20, last: '' });
    expect(decodeRecord(`rev_d|1|10|3|${SHA}|b/t/k|30|rev_a`)).toEqual({ revision: 'rev_d', deleted: true, mtime: 10, size: 3, sha256: SHA, key: 'b/t/k', recordedAt: 30, last: 'rev_a' });
  });
});
