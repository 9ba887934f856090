import { isUtf8 } from 'node:buffer';
import { AppError, errors } from '@workspace/platform';

/** Objects and arrays nested deeper than this are refused before parsing (CONTRACT §1: 400). */
export const JSON_MAX_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = new Set([0x5b, 0x7b]); // [ {
const CLOSE = new Set([0x5d, 0x7d]); // ] }

/** Digits, sign, point and exponent: what a JSON number token is made of. */
function inNumber(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || byte === 0x2d || byte === 0x2b || byte === 0x2e || byte === 0x65 || byte === 0x45;
}

/**
 * Checks the raw bytes of a JSON body before it is parsed, in one pass and without recursion
 * (so no input can exhaust the stack here or anywhere after): valid UTF-8 (never silently
 * replaced by U+FFFD), at most JSON_MAX_DEPTH levels of nesting, and no number that only
 * parses as ±Infinity (`1e309`). Malformed JSON is left to the parser. Returns the refusal.
 */
export function checkJsonText(bytes: Uint8Array): AppError | undefined {
  if (!isUtf8(bytes)) return errors.invalidArgument('JSON body must be valid UTF-8');
  let depth = 0;
  for (let i = 0; i < bytes.length; ) {
    const byte = bytes[i]!;
    if (byte === QUOTE) {
      // Skip the string; an escaped character (\" included) is skipped with its backslash.
      for (i++; i < bytes.length && bytes[i] !== QUOTE; ) i += bytes[i] === BACKSLASH ? 2 : 1;
      i++;
    } else if (OPEN.has(byte)) {
      if (++depth > JSON_MAX_DEPTH) return errors.invalidArgument(`JSON body is nested deeper than ${JSON_MAX_DEPTH} levels`);
      i++;
    } else if (CLOSE.has(byte)) {
      depth--;
      i++;
    } else if (inNumber(byte)) {
      const start = i;
      while (i < bytes.length && inNumber(bytes[i]!)) i++;
      const value = Number(Buffer.from(bytes.buffer, bytes.byteOffset + start, i - start).toString('latin1'));
      // NaN is a malformed token: the parser reports it. Only a well-formed overflow is ours.
      if (value === Infinity || value === -Infinity) return errors.invalidArgument('JSON body holds a number out of range: numbers must be finite (at most about 1.8e308)');
    } else {
      i++;
    }
  }
  return undefined;
}
