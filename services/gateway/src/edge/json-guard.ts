import { isUtf8 } from 'node:buffer';
import { AppError, errors } from '@workspace/platform';

/** Objects and arrays nested deeper than this are refused before parsing (docs/api/conventions.md#json: 400). */
export const JSON_MAX_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = new Set([0x5b, 0x7b]); // [ {
const CLOSE = new Set([0x5d, 0x7d]); // ] }

/** Digits, sign, point and exponent: what a JSON number token is made of. */
function inNumber(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || byte === 0x2d || byte === 0x2b || byte === 0x2e || byte === 0x65 || byte === 0x45;
}

/** Digits of a number without an exponent that a double always holds (at most about 1.8e308). */
const MAX_PLAIN_DIGITS = 300;

const latin1 = (bytes: Uint8Array, start: number, end: number): string => Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1');

/** How many bytes the UTF-8 sequence that `lead` starts has (0: not a lead byte). */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/**
 * Where the last complete UTF-8 sequence of `bytes` ends: a sequence cut off by the end of a
 * piece is left for the next piece. Anything that is not UTF-8 is left for isUtf8 to refuse.
 */
function completeUpTo(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: its lead is further back
    const length = sequenceLength(byte);
    return length > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/**
 * The checks every JSON document from a client gets on its raw bytes before it is parsed, in
 * one pass and without recursion (so no input can exhaust the stack here or anywhere after):
 * valid UTF-8 (never silently replaced by U+FFFD), at most JSON_MAX_DEPTH levels of nesting,
 * and no number that only parses as ±Infinity (`1e309`). Malformed JSON is left to the parser.
 *
 * The document may arrive in pieces (`push` each, then `end`): the first refusal comes as soon
 * as its bytes are seen, so a document of nested brackets is refused after JSON_MAX_DEPTH + 1
 * bytes, whatever its size. `subject` names the document in refusals.
 */
export class JsonTextGuard {
  readonly #subject: string;
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** The number token so far when a piece ended inside it. */
  #number = '';
  /** The start of a UTF-8 sequence a piece ended inside. */
  #cut: Uint8Array = new Uint8Array(0);
  #refused: AppError | undefined;
  #bytes = 0;
  #containers = 0;
  #strings = 0;
  #numbers = 0;

  constructor(subject = 'JSON body') {
    this.#subject = subject;
  }

  /** Checks the next piece; the refusal, once there is one (then every later call repeats it). */
  push(piece: Uint8Array): AppError | undefined {
    if (this.#refused) return this.#refused;
    let bytes = piece;
    if (this.#cut.length > 0) {
      bytes = new Uint8Array(this.#cut.length + piece.length);
      bytes.set(this.#cut);
      bytes.set(piece, this.#cut.length);
    }
    const complete = completeUpTo(bytes);
    if (!isUtf8(bytes.subarray(0, complete))) return this.#refuse(`${this.#subject} must be valid UTF-8`);
    this.#cut = new Uint8Array(bytes.subarray(complete));
    this.#bytes += piece.byteLength;
    return this.#scan(bytes.subarray(0, complete));
  }

  /**
   * About how much heap JSON.parse takes for the document seen so far, from what it holds
   * (measured on V8: an empty object or array ~70 bytes, a short string ~15, a number in an
   * array ~10, text twice over), so that a document of millions of tiny values can be refused
   * before it is parsed: 16 MiB of `[],` take ~25 times their size, 16 MiB of text about twice.
   */
  estimatedParsedBytes(): number {
    return 2 * this.#bytes + 72 * this.#containers + 24 * this.#strings + 8 * this.#numbers;
  }

  /** The document is whole: the refusal, if any. */
  end(): AppError | undefined {
    if (this.#refused) return this.#refused;
    if (this.#cut.length > 0) return this.#refuse(`${this.#subject} must be valid UTF-8`);
    return this.#number ? this.#checkNumber(this.#number) : undefined;
  }

  #refuse(message: string): AppError {
    this.#refused = errors.invalidArgument(message);
    return this.#refused;
  }

  #checkNumber(token: string): AppError | undefined {
    this.#number = '';
    const value = Number(token);
    // NaN is a malformed token: the parser reports it. Only a well-formed overflow is ours.
    if (value === Infinity || value === -Infinity) return this.#refuse(`${this.#subject} holds a number out of range: numbers must be finite (at most about 1.8e308)`);
    return undefined;
  }

  #scan(bytes: Uint8Array): AppError | undefined {
    let i = 0;
    if (this.#number) {
      // The number the last piece ended in goes on here.
      while (i < bytes.length && inNumber(bytes[i]!)) i++;
      const token = this.#number + latin1(bytes, 0, i);
      if (i === bytes.length) {
        this.#number = token;
        return undefined;
      }
      const refused = this.#checkNumber(token);
      if (refused) return refused;
    }
    while (i < bytes.length) {
      if (this.#inString) {
        i = this.#skipString(bytes, i);
        continue;
      }
      const byte = bytes[i]!;
      if (byte === QUOTE) {
        this.#inString = true;
        this.#strings++;
        i++;
      } else if (OPEN.has(byte)) {
        if (++this.#depth > JSON_MAX_DEPTH) return this.#refuse(`${this.#subject} is nested deeper than ${JSON_MAX_DEPTH} levels`);
        this.#containers++;
        i++;
      } else if (CLOSE.has(byte)) {
        this.#depth--;
        i++;
      } else if (inNumber(byte)) {
        this.#numbers++;
        const start = i;
        let exponent = false;
        for (; i < bytes.length && inNumber(bytes[i]!); i++) if ((bytes[i]! | 0x20) === 0x65) exponent = true;
        if (i === bytes.length) {
          this.#number = latin1(bytes, start, i);
          return undefined;
        }
        // Only an exponent or more digits than a double holds can make a number overflow.
        if (exponent || i - start > MAX_PLAIN_DIGITS) {
          const refused = this.#checkNumber(latin1(bytes, start, i));
          if (refused) return refused;
        }
      } else {
        i++;
      }
    }
    return undefined;
  }

  /** Past the string that `bytes[i]` is in (its closing quote), or to the end of the piece. */
  #skipString(bytes: Uint8Array, from: number): number {
    let i = from;
    if (this.#escaped) {
      // The last piece ended in a backslash: this byte is the one it escapes.
      this.#escaped = false;
      i++;
    }
    for (;;) {
      const quote = bytes.indexOf(QUOTE, i);
      const end = quote < 0 ? bytes.length : quote;
      // An odd run of backslashes before the quote (or the end) escapes it.
      let run = 0;
      while (end - run - 1 >= i && bytes[end - run - 1] === BACKSLASH) run++;
      if (quote < 0) {
        this.#escaped = run % 2 === 1;
        return bytes.length;
      }
      if (run % 2 === 0) {
        this.#inString = false;
        return quote + 1;
      }
      i = quote + 1;
    }
  }
}

/** JsonTextGuard's checks of a document whole (a request body): the refusal, if any. */
export function checkJsonText(bytes: Uint8Array, subject = 'JSON body'): AppError | undefined {
  const guard = new JsonTextGuard(subject);
  return guard.push(bytes) ?? guard.end();
}
