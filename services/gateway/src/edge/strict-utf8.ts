import { isUtf8 } from 'node:buffer';
import { AppError, errors } from '@workspace/platform';

/** Query parameters that carry workspace paths: bytes that are not UTF-8 there are INVALID_PATH. */
const PATH_PARAMETERS = new Set(['path']);

function isHex(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
}

/** The bytes a percent-encoded string stands for (`%FF` → 0xFF; other characters as UTF-8). */
function percentDecoded(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x25 && i + 2 < text.length && isHex(text.charCodeAt(i + 1)) && isHex(text.charCodeAt(i + 2))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (code < 0x80) {
      bytes.push(code);
    } else {
      bytes.push(...Buffer.from(text[i]!, 'utf8'));
    }
  }
  return Buffer.from(bytes);
}

/**
 * Node's query parser turns percent-encoded bytes that are not UTF-8 (`%FF`, a cut `%C3`) into
 * U+FFFD without a word, so `/files/%FF` would name `/files/�`. This finds the first such
 * parameter of a raw query string and answers it: INVALID_PATH for a path, else
 * INVALID_ARGUMENT naming the parameter.
 */
export function checkQueryUtf8(rawQuery: string): AppError | undefined {
  for (const pair of rawQuery.split('&')) {
    if (!pair.includes('%')) continue;
    const eq = pair.indexOf('=');
    const key = percentDecoded(eq < 0 ? pair : pair.slice(0, eq));
    if (!isUtf8(key)) return errors.invalidArgument('a query parameter name is not valid UTF-8');
    const name = key.toString('utf8').replace(/\+/g, ' ');
    if (eq >= 0 && !isUtf8(percentDecoded(pair.slice(eq + 1)))) {
      if (PATH_PARAMETERS.has(name)) return errors.invalidPath(`${name} is not valid UTF-8 once percent-decoded`);
      return errors.invalidArgument(`${name} is not valid UTF-8 once percent-decoded`, name);
    }
  }
  return undefined;
}

