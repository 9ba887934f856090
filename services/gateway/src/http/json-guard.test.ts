import { describe, expect, it } from 'vitest';
import { checkJsonText, JSON_MAX_DEPTH } from './json-guard.js';

const check = (text: string | Buffer) => checkJsonText(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
const nested = (levels: number, open = '[', close = ']') => open.repeat(levels) + close.repeat(levels);

describe('json guard', () => {
  it('json guard — 64 levels of nesting pass, 65 are refused; brackets inside strings do not count', () => {
    expect(check(nested(JSON_MAX_DEPTH))).toBeUndefined();
    expect(check(nested(JSON_MAX_DEPTH + 1))).toMatchObject({ code: 'INVALID_ARGUMENT', message: 'JSON body is nested deeper than 64 levels' });
    expect(check(`{"a":${'{"a":'.repeat(63)}1${'}'.repeat(64)}`)).toBeUndefined();
    expect(check(`{"a":${'{"a":'.repeat(64)}1${'}'.repeat(65)}`)).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(check(JSON.stringify({ s: '['.repeat(1000), t: 'a\\"[[[', u: '\\' }))).toBeUndefined();
  });

  it('json guard — a million levels are refused at once, without recursion', () => {
    expect(check(nested(500_000))).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(check(nested(500_000, '{"a":', '}'))).toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('json guard — numbers that only parse as ±Infinity are refused; large finite ones and numbers in strings pass', () => {
    for (const text of ['1e309', '{"n":-1e309}', '[1, 2E400]', '{"a":[{"b":1' + '0'.repeat(400) + '}]}']) {
      expect(check(text), text).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('numbers must be finite') });
    }
    for (const text of ['1.7976931348623157e308', '-5e-324', '{"n":"1e309"}', '[0, -0.5, 12e3]', 'true', 'null']) expect(check(text), text).toBeUndefined();
  });

  it('json guard — bytes that are not UTF-8 are refused, never replaced', () => {
    expect(check(Buffer.concat([Buffer.from('{"path":"/files/'), Buffer.from([0xff]), Buffer.from('"}')]))).toMatchObject({ code: 'INVALID_ARGUMENT', message: 'JSON body must be valid UTF-8' });
    expect(check('{"path":"/files/é 用户 😀"}')).toBeUndefined();
  });

  it('json guard — malformed JSON is left to the parser', () => {
    for (const text of ['{', '1e', '--1', '"unterminated']) expect(check(text), text).toBeUndefined();
  });
});
