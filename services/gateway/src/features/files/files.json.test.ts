import { describe, expect, it } from 'vitest';
import { OnConflict, type Change } from '@workspace/proto/workspace/files/v1/files';
import { changeJson } from './files.json.js';
import { conflictMode } from '../../clients.js';

const change = (fields: Partial<Change>): Change => ({ type: 'created', kind: 'file', path: '/files/a.txt', from: '', at: '2024-05-01T12:00:00.000Z', sha256: '', ...fields });
const SHA = 'ab'.repeat(32);

describe('files json', () => {
  it('change json — a created or updated file carries size and sha256, even a size of 0', () => {
    expect(changeJson(change({ size: 5, sha256: SHA }))).toEqual({ type: 'created', kind: 'file', path: '/files/a.txt', at: '2024-05-01T12:00:00.000Z', size: 5, sha256: SHA });
    expect(changeJson(change({ type: 'updated', size: 0, sha256: SHA }))).toMatchObject({ type: 'updated', size: 0, sha256: SHA });
  });

  it('change json — `from` only for moved; no size or sha256 without a size', () => {
    const moved = changeJson(change({ type: 'moved', kind: 'directory', path: '/files/new', from: '/files/old' }));
    expect(moved).toEqual({ type: 'moved', kind: 'directory', path: '/files/new', from: '/files/old', at: '2024-05-01T12:00:00.000Z' });
    const deleted = changeJson(change({ type: 'deleted', from: '/files/ignored', sha256: SHA }));
    expect(deleted).toEqual({ type: 'deleted', kind: 'file', path: '/files/a.txt', at: '2024-05-01T12:00:00.000Z' });
  });

  it('conflict mode — the three names, nothing else (not even inherited keys)', () => {
    expect(conflictMode('error')).toBe(OnConflict.ON_CONFLICT_ERROR);
    expect(conflictMode('overwrite')).toBe(OnConflict.ON_CONFLICT_OVERWRITE);
    expect(conflictMode('uuid')).toBe(OnConflict.ON_CONFLICT_UUID);
    expect(conflictMode('replace')).toBeUndefined();
    expect(conflictMode('toString')).toBeUndefined();
  });
});
