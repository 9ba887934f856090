import { describe, expect, it } from 'vitest';
import { checkQueryUtf8 } from './strict-utf8.js';

describe('strict UTF-8 in query strings', () => {
  it('strict utf-8 — a path whose percent-decoded bytes are not UTF-8 is INVALID_PATH', () => {
    for (const query of ['path=/files/%FF', 'path=%2Ffiles%2Fa%C3', 'recursive=true&path=/files/%C3%28', 'path=/files/%ED%A0%80']) {
      expect(checkQueryUtf8(query), query).toMatchObject({ code: 'INVALID_PATH' });
    }
  });

  it('strict utf-8 — another parameter is INVALID_ARGUMENT naming it; a bad name is INVALID_ARGUMENT', () => {
    expect(checkQueryUtf8('q=%FF')).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'q' } });
    expect(checkQueryUtf8('cursor=ab%80cd')).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'cursor' } });
    expect(checkQueryUtf8('%FF=1')).toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('strict utf-8 — valid UTF-8, plain text and stray percent signs pass (the schemas judge them)', () => {
    for (const query of ['path=/files/%C3%A9t%C3%A9', 'path=/files/%E7%94%A8%E6%88%B7', 'path=/files/%F0%9F%98%80', 'path=/files/a+b', 'q=100%', 'q=%zz', 'path=/files/é', '', 'a&b=&=c']) {
      expect(checkQueryUtf8(query), query).toBeUndefined();
    }
  });
});
