import { describe, expect, it } from 'vitest';
import { scoped } from './changes.js';
import type { LoggedChange } from './ports.js';

const at = Date.UTC(2026, 0, 1);
const change = (c: Partial<LoggedChange>): LoggedChange => ({ id: '1-0', type: 'created', kind: 'file', path: '/files/x', at, ...c });

describe('changes scope', () => {
  it('changes scope — moves across the boundary become created or deleted; inside it they stay moves', () => {
    const moved = change({ type: 'moved', path: '/files/in/a', from: '/files/out/a', size: 1, sha256: 'h' });
    expect(scoped(moved, '/files/in')).toMatchObject({ type: 'created', path: '/files/in/a', size: 1 });
    expect(scoped(moved, '/files/out')).toMatchObject({ type: 'deleted', path: '/files/out/a' });
    expect(scoped(moved, '/files')).toEqual({ type: 'moved', kind: 'file', path: '/files/in/a', from: '/files/out/a', at: new Date(at).toISOString() });
    expect(scoped(moved, '/files/elsewhere')).toBeUndefined();
  });

  it('changes scope — a change above the watched path reaches it: a delete or move away removes it, a directory brought over it is new', () => {
    expect(scoped(change({ type: 'deleted', kind: 'directory', path: '/files/a' }), '/files/a/b')).toMatchObject({ type: 'deleted', kind: 'directory', path: '/files/a/b' });
    expect(scoped(change({ type: 'moved', kind: 'directory', path: '/files/z', from: '/files/a' }), '/files/a/b')).toMatchObject({ type: 'deleted', path: '/files/a/b' });
    expect(scoped(change({ type: 'moved', kind: 'directory', path: '/files/b', from: '/files/a' }), '/files/b/c')).toMatchObject({ type: 'created', kind: 'directory', path: '/files/b/c' });
    expect(scoped(change({ type: 'created', kind: 'directory', path: '/files/b' }), '/files/b/c')).toMatchObject({ type: 'created', kind: 'directory', path: '/files/b/c' });
    expect(scoped(change({ type: 'created', kind: 'file', path: '/files/b' }), '/files/b/c')).toBeUndefined();
  });

  it('changes scope — a rewind is one `rewound` change at its path, seen at or below it, and at the watched path from below', () => {
    const rewound = change({ type: 'rewound', kind: 'directory', path: '/files/w' });
    expect(scoped(rewound, '/files')).toEqual({ type: 'rewound', kind: 'directory', path: '/files/w', at: new Date(at).toISOString() });
    expect(scoped(rewound, '/files/w')).toMatchObject({ type: 'rewound', path: '/files/w' });
    expect(scoped(rewound, '/files/w/sub')).toMatchObject({ type: 'rewound', kind: 'directory', path: '/files/w/sub' });
    expect(scoped(rewound, '/files/other')).toBeUndefined();
  });
});
