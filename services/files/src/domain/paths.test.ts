import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ancestors, childPath, compareBytes, parsePath, uniqueName } from './paths.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

const invalid = (raw: string) => codeOf(() => parsePath(raw)) === 'INVALID_PATH';

/** A small deterministic PRNG so that a failure names a reproducible input. */
function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('paths', () => {
  it('paths — the root and ordinary paths are accepted and normalized', () => {
    expect(parsePath('/files')).toEqual({ path: '/files', segments: [], trailingSlash: false });
    expect(parsePath('/files/')).toEqual({ path: '/files', segments: [], trailingSlash: true });
    expect(parsePath('/files/a/b.txt')).toMatchObject({ path: '/files/a/b.txt', segments: ['a', 'b.txt'] });
    expect(parsePath('/files/dir/')).toEqual({ path: '/files/dir', segments: ['dir'], trailingSlash: true });
    expect(parsePath('/files/ spaced name /x').segments).toEqual([' spaced name ', 'x']);
    expect(parsePath('/files/研究/🚀.md').segments).toEqual(['研究', '🚀.md']);
    expect(parsePath('/files/...').segments).toEqual(['...']);
    expect(parsePath('/files/.hidden').segments).toEqual(['.hidden']);
    expect(parsePath('/files/a%2Fb').segments).toEqual(['a%2Fb']);
  });

  it('paths — names are case-sensitive and never re-decoded or normalized', () => {
    expect(parsePath('/files/A').path).not.toBe(parsePath('/files/a').path);
    expect(parsePath('/files/%2e%2e').segments).toEqual(['%2e%2e']);
    expect(parsePath('/files/caf\u00e9').path).not.toBe(parsePath('/files/cafe\u0301').path);
  });

  it('paths — everything outside /files is rejected', () => {
    for (const raw of ['', '/', 'files', 'files/a', '/filesx', '/Files', '/FILES/a', '/file', ' /files', '/files ', 'C:\\files', '//files', '/./files', '/x/../files']) {
      expect(invalid(raw), JSON.stringify(raw)).toBe(true);
    }
  });

  it('paths — empty, dot and dot-dot segments are rejected', () => {
    for (const raw of ['/files//', '/files//a', '/files/a//b', '/files/a//', '/files/.', '/files/..', '/files/./a', '/files/a/..', '/files/a/../b', '/files/../etc/passwd']) {
      expect(invalid(raw), raw).toBe(true);
    }
  });

  it('paths — backslashes, NUL, other control characters and lone surrogates are rejected', () => {
    const bad = ['\\', '\u0000', '\u0001', '\t', '\n', '\r', '\u001f', '\u007f', '\u0080', '\u009f', '\ud800', '\udfff'];
    for (const ch of bad) {
      expect(invalid(`/files/a${ch}b`), JSON.stringify(ch)).toBe(true);
      expect(invalid(`/files/${ch}`), JSON.stringify(ch)).toBe(true);
    }
    expect(invalid('/files/..\\..\\windows')).toBe(true);
  });

  it('paths — a segment may have 255 UTF-8 bytes, not 256', () => {
    expect(invalid(`/files/${'a'.repeat(255)}`)).toBe(false);
    expect(invalid(`/files/${'a'.repeat(256)}`)).toBe(true);
    expect(invalid(`/files/${'é'.repeat(127)}a`)).toBe(false); // 255 bytes
    expect(invalid(`/files/${'é'.repeat(128)}`)).toBe(true); // 256 bytes, 128 characters
    expect(invalid(`/files/${'🚀'.repeat(63)}abc`)).toBe(false); // 255 bytes
    expect(invalid(`/files/${'🚀'.repeat(64)}`)).toBe(true); // 256 bytes
  });

  it('paths — a path may have 900 UTF-8 bytes, not 901; a dropped trailing slash does not count', () => {
    const at = (total: number) => {
      const rest = total - '/files'.length;
      const segs: string[] = [];
      let left = rest;
      while (left > 0) {
        const len = Math.min(200, left - 1);
        segs.push('x'.repeat(len));
        left -= len + 1;
      }
      return `/files/${segs.join('/')}`;
    };
    expect(Buffer.byteLength(at(900))).toBe(900);
    expect(invalid(at(900))).toBe(false);
    expect(invalid(`${at(900)}/`)).toBe(false);
    expect(Buffer.byteLength(at(901))).toBe(901);
    expect(invalid(at(901))).toBe(true);
    const wide = `/files/${Array.from({ length: 4 }, () => 'ü'.repeat(100)).join('/')}/${'ü'.repeat(44)}a`;
    expect(Buffer.byteLength(wide)).toBe(900);
    expect(invalid(wide)).toBe(false);
    expect(invalid(`${wide}b`)).toBe(true);
  });

  it('paths — generated hostile inputs never parse into something that escapes the root', () => {
    const rand = prng(20240601);
    const atoms = ['..', '.', '', '/', '\\', '%2e', '%2f', '%00', '\u0000', '\u202e', '\ufeff', 'a', 'é', '🚀', ' ', '~', '\n', '\u0085', '\ud83d', 'files', '/files', 'x'.repeat(300)];
    for (let i = 0; i < 5_000; i++) {
      const n = 1 + Math.floor(rand() * 6);
      let raw = rand() < 0.8 ? '/files/' : rand() < 0.5 ? '/files' : '/';
      for (let j = 0; j < n; j++) raw += atoms[Math.floor(rand() * atoms.length)] + (rand() < 0.5 ? '/' : '');
      let parsed;
      try {
        parsed = parsePath(raw);
      } catch (err) {
        expect((err as { code: string }).code, JSON.stringify(raw)).toBe('INVALID_PATH');
        continue;
      }
      expect(parsed.path === '/files' || parsed.path.startsWith('/files/'), JSON.stringify(raw)).toBe(true);
      for (const s of parsed.segments) {
        expect(['', '.', '..'].includes(s) || s.includes('/') || s.includes('\\') || /\p{Cc}|\p{Cs}/u.test(s), JSON.stringify(raw)).toBe(false);
        expect(Buffer.byteLength(s)).toBeLessThanOrEqual(255);
      }
      expect(Buffer.byteLength(parsed.path)).toBeLessThanOrEqual(900);
      expect(parsePath(parsed.path).path).toBe(parsed.path); // normal form is a fixed point
    }
  });

  it('paths — random bytes decoded as UTF-8 either fail with INVALID_PATH or are clean', () => {
    for (let i = 0; i < 2_000; i++) {
      const raw = `/files/${randomBytes(1 + (i % 40)).toString('utf8')}`;
      const code = codeOf(() => parsePath(raw));
      expect(code === undefined || code === 'INVALID_PATH').toBe(true);
    }
  });

  it('paths — ancestors, child paths and unique names', () => {
    expect(ancestors(parsePath('/files/a/b/c'))).toEqual([['a'], ['a', 'b']]);
    expect(ancestors(parsePath('/files/a'))).toEqual([]);
    expect(childPath(parsePath('/files/a'), 'b.txt').path).toBe('/files/a/b.txt');
    expect(codeOf(() => childPath(parsePath('/files'), '..'))).toBe('INVALID_PATH');
    expect(codeOf(() => childPath(parsePath('/files'), 'a/b'))).toBe('INVALID_PATH');
    expect(uniqueName('notes.md', 'ID')).toBe('notes-ID.md');
    expect(uniqueName('Makefile', 'ID')).toBe('Makefile-ID');
    expect(uniqueName('.bashrc', 'ID')).toBe('.bashrc-ID');
    expect(uniqueName('archive.tar.gz', 'ID')).toBe('archive.tar-ID.gz');
    expect(uniqueName('.env.local', 'ID')).toBe('.env-ID.local');
  });

  it('paths — byte order differs from UTF-16 order where it must', () => {
    const names = ['\uff5e', '😀', 'a', 'B'];
    expect([...names].sort(compareBytes)).toEqual(['B', 'a', '\uff5e', '😀']);
    expect([...names].sort()).toEqual(['B', 'a', '😀', '\uff5e']);
  });
});
