import { CREATED_AT, REVISION_ID, SHA256, UPDATED_AT } from '../../api/ids.examples.js';

/** Examples of the file routes (docs/api/files.md). */

const note = { path: '/files/notes.md', name: 'notes.md', type: 'file' as const, size: 5, modifiedAt: CREATED_AT, mimeType: 'text/markdown', sha256: SHA256 };

export const fileList = { path: '/files', recursive: false, entries: [{ path: '/files/docs', name: 'docs', type: 'directory' }, note], cursor: null, hasMore: false };

export const readResult = { path: '/files/notes.md', content: 'hello', encoding: 'utf-8' };

export const uploadForm = { path: '/files/notes.md', onConflict: 'overwrite', file: 'hello' };

export const uploadResult = { success: true, path: '/files/notes.md', size: 5, mimeType: 'text/markdown', sha256: SHA256 };

export const deleteResult = { success: true, path: '/files/notes.md' };

export const moveBody = { from: '/files/drafts/report.md', to: '/files/reports/2024.md', onConflict: 'error' as const };

export const moveResult = { success: true, from: '/files/drafts/report.md', path: '/files/reports/2024.md' };

export const changesCursor = { cursor: 'opaque-cursor' };

export const changeList = {
  changes: [
    { type: 'created', kind: 'file', path: '/files/notes.md', at: CREATED_AT, size: 5, sha256: SHA256 },
    { type: 'moved', kind: 'directory', path: '/files/archive', from: '/files/old', at: UPDATED_AT },
  ],
  cursor: 'opaque-cursor-2',
  hasMore: false,
};

export const revisionList = {
  path: '/files/notes.md',
  revisions: [
    { revision: 'rev_5b0c1d0e6a7f48e2b9c3d4e5f6a7b8c9', deleted: true, modifiedAt: UPDATED_AT },
    { revision: REVISION_ID, deleted: false, modifiedAt: CREATED_AT, size: 5, sha256: SHA256, mimeType: 'text/markdown' },
  ],
};

export const trashList = {
  path: '/files',
  recursive: false,
  entries: [{ path: '/files/notes.md', name: 'notes.md', size: 5, sha256: SHA256, mimeType: 'text/markdown', deletedAt: UPDATED_AT, revision: REVISION_ID }],
};

export const restoreBody = { path: '/files/notes.md', revision: REVISION_ID };

export const restoreResult = { success: true, path: '/files/notes.md', size: 5, mimeType: 'text/markdown', sha256: SHA256, revision: 'rev_9a8b7c6d5e4f30211203f4e5d6c7b8a9' };
export const createDirectoryBody = { path: '/files/reports/2024' };
export const createDirectoryResult = { path: '/files/reports/2024', created: true };
