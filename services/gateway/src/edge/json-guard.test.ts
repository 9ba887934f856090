import { describe, expect, it } from 'vitest';
import { checkJsonText, JSON_MAX_DEPTH, JsonTextGuard } from './json-guard.js';

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

  it('json guard — a document in pieces gets the same verdict wherever it is cut (inside strings, escapes, numbers, UTF-8 sequences)', () => {
    const documents = [
      '{"path":"/files/é 用户 😀","n":[1.5e3,-2,"a\\"b\\\\"],"t":true}',
      `{"big":1${'0'.repeat(400)}}`,
      '{"n":12345678901234567890e300}',
      nested(JSON_MAX_DEPTH),
      nested(JSON_MAX_DEPTH + 1),
    ];
    const bytes = [...documents.map((d) => Buffer.from(d, 'utf8')), Buffer.concat([Buffer.from('{"a":"caf'), Buffer.from([0xc3]), Buffer.from('"}')]), Buffer.from([0x22, 0xf0, 0x9f, 0x98])];
    for (const whole of bytes) {
      const expected = checkJsonText(whole)?.message;
      for (let cut = 0; cut <= whole.length; cut++) {
        for (const size of [1, 2, 3, 7]) {
          const guard = new JsonTextGuard();
          let refused: string | undefined;
          for (const piece of [whole.subarray(0, cut), ...Array.from({ length: Math.ceil((whole.length - cut) / size) }, (_, k) => whole.subarray(cut + k * size, cut + (k + 1) * size))]) {
            refused ??= guard.push(piece)?.message;
          }
          refused ??= guard.end()?.message;
          expect(refused, `${whole.toString('latin1')} cut at ${cut}, then pieces of ${size}`).toBe(expected);
        }
      }
    }
  });

  it('json guard — in pieces, nested brackets are refused as soon as their bytes are seen, and it names the document', () => {
    const guard = new JsonTextGuard('agent.json');
    expect(guard.push(Buffer.alloc(JSON_MAX_DEPTH, '['))).toBeUndefined();
    expect(guard.push(Buffer.from('['))).toMatchObject({ code: 'INVALID_ARGUMENT', message: `agent.json is nested deeper than ${JSON_MAX_DEPTH} levels` });
    expect(guard.push(Buffer.from(']'))?.message).toMatch(/nested deeper/);
    expect(checkJsonText(Buffer.from([0xff]), 'agent.json')?.message).toBe('agent.json must be valid UTF-8');
  });

  it('json guard — estimates the heap a document takes once parsed: tiny values count for much more than their bytes, text for about twice', () => {
    const estimate = (text: string) => {
      const guard = new JsonTextGuard();
      guard.push(Buffer.from(text));
      return guard.estimatedParsedBytes() / Buffer.byteLength(text);
    };
    expect(estimate(`[${'[],'.repeat(1000)}[]]`)).toBeGreaterThan(20);
    expect(estimate(`[${'{},'.repeat(1000)}{}]`)).toBeGreaterThan(20);
    expect(estimate(JSON.stringify({ text: 'x'.repeat(100_000) }))).toBeLessThan(2.1);
    expect(estimate(`[${'0,'.repeat(1000)}0]`)).toBeLessThan(8);
  });
});
