import { describe, expect, it } from 'vitest';
import { decodeFormFilename } from './form-filename.js';

describe('form file names — WHATWG multipart encoding', () => {
  it('undoes %22, %0D and %0A, as browsers write them', () => {
    expect(decodeFormFilename('résumé %22final%22.pdf')).toBe('résumé "final".pdf');
    expect(decodeFormFilename('a%0D%0Ab%0d%0a')).toBe('a\r\nb\r\n');
  });

  it('leaves every other percent sequence as the name\'s own text', () => {
    expect(decodeFormFilename('100%25 %20 %2F %E9.txt')).toBe('100%25 %20 %2F %E9.txt');
    expect(decodeFormFilename('%2')).toBe('%2');
  });
});
