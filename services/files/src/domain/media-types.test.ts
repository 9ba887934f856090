import { describe, expect, it } from 'vitest';
import { mimeTypeOf } from './media-types.js';

describe('media types', () => {
  it('media types — source and configuration files are text, by extension (any case) or by name', () => {
    const want: Record<string, string> = {
      'a.ts': 'text/x-typescript', 'index.d.ts': 'text/x-typescript', 'A.MTS': 'text/x-typescript', 'b.cts': 'text/x-typescript', 'c.tsx': 'text/x-typescript',
      'a.py': 'text/x-python', 'main.go': 'text/x-go', 'lib.rs': 'text/x-rust', 'a.rb': 'text/x-ruby', 'a.kt': 'text/x-kotlin', 'a.swift': 'text/x-swift',
      'a.vue': 'text/x-vue', 'a.proto': 'text/x-protobuf', 'a.sh': 'text/x-shellscript', 'a.sql': 'text/x-sql', 'Cargo.toml': 'text/x-toml', 'a.php': 'text/x-php',
      Dockerfile: 'text/x-dockerfile', Makefile: 'text/x-makefile', '.gitignore': 'text/plain', 'package-lock.json': 'application/json', 'yarn.lock': 'text/plain',
      'a.js': 'text/javascript', 'a.mjs': 'text/javascript', 'a.jsx': 'text/jsx', 'a.java': 'text/x-java-source', 'a.c': 'text/x-c', 'a.md': 'text/markdown',
      'B.MD': 'text/markdown', 'a.yaml': 'text/yaml', 'a.css': 'text/css', 'a.html': 'text/html', 'a.txt': 'text/plain',
    };
    for (const [name, type] of Object.entries(want)) expect(mimeTypeOf(name), name).toBe(type);
    // Asked twice: the cache by extension answers the same.
    for (const [name, type] of Object.entries(want)) expect(mimeTypeOf(name), name).toBe(type);
  });

  it('media types — everything else as the registry says: images, audio, archives; unknown → application/octet-stream', () => {
    expect(mimeTypeOf('a.png')).toBe('image/png');
    expect(mimeTypeOf('a.mp3')).toBe('audio/mpeg');
    expect(mimeTypeOf('a.zip')).toBe('application/zip');
    expect(mimeTypeOf('a.pdf')).toBe('application/pdf');
    expect(mimeTypeOf('x.unknownext')).toBe('application/octet-stream');
    expect(mimeTypeOf('noextension')).toBe('application/octet-stream');
    expect(mimeTypeOf('constructor')).toBe('application/octet-stream');
    expect(mimeTypeOf('a.constructor')).toBe('application/octet-stream');
  });
});
