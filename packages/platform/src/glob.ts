import { RE2JS } from 're2js';
import { AppError, errors } from './errors/app-error.js';

/** A glob is at most this many characters (code points) (docs/api/files.md#search). */
export const MAX_GLOB_CHARS = 1_000;

export interface GlobOptions {
  /**
   * Whether a glob without `/` matches the name at any depth (a search's `glob`,
   * docs/api/files.md#search), or, like every other glob, the whole relative path (MCP
   * `search_files`, as the MCP reference filesystem server reads it: `*.txt` at the top level
   * only; it takes a leading `**` segment to reach deeper). Default true.
   */
  nameAtAnyDepth?: boolean;
  /** The argument a refusal names (400 INVALID_ARGUMENT `details.field`). Default `glob`. */
  field?: string;
}

/**
 * The project's one glob matcher (docs/api/files.md#search, docs/api/mcp.md#tools), of the path
 * relative to a folder: without `/` it matches the file's name at any depth unless
 * `nameAtAnyDepth` is false; `**` as a whole segment is zero or
 * more folders; `*` is any run of characters but `/` (names starting with a dot included), `?`
 * one of them; `[…]` a class (`[!…]` or `[^…]` its complement); `{a,b}` alternatives, nested
 * at will; `\` makes the next character literal. Anything else is literal.
 *
 * It is translated to RE2 and matched there, in time linear in the path: a glob library that
 * compiles to a backtracking expression takes exponential time on `*a*a*a…b` against a long
 * name, and one search would stop the whole service.
 */
export function globMatcher(glob: string, options: GlobOptions = {}): (rel: string) => boolean {
  const field = options.field ?? 'glob';
  if (glob === '') return () => true;
  if ([...glob].length > MAX_GLOB_CHARS) throw errors.invalidArgument(`${field} must be at most ${MAX_GLOB_CHARS} characters`, field);
  const basename = (options.nameAtAnyDepth ?? true) && !glob.includes('/');
  let re: RE2JS;
  try {
    re = RE2JS.compile(translate([...glob], field), RE2JS.DOTALL);
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw errors.invalidArgument(`${field} is not a valid pattern`, field);
  }
  return (rel) => re.matches(basename ? rel.slice(rel.lastIndexOf('/') + 1) : rel);
}

/** Zero or more folders: what `**` as a segment followed by more stands for. */
const FOLDERS = '(?:[^/]*/)*';

/** The RE2 pattern of a glob (its characters), matching the whole text. */
function translate(chars: string[], field: string): string {
  let out = '';
  let i = 0;
  const atSegmentStart = (at: number) => at === 0 || chars[at - 1] === '/';
  while (i < chars.length) {
    const c = chars[i]!;
    if (c === '*' && chars[i + 1] === '*' && atSegmentStart(i) && (i + 2 === chars.length || chars[i + 2] === '/')) {
      // `**` as a whole segment: zero or more folders (`**/x`, `a/**/x`), or anything below (`a/**`).
      if (i + 2 === chars.length) {
        out += '.*';
        i += 2;
      } else {
        if (!out.endsWith(FOLDERS)) out += FOLDERS;
        i += 3;
      }
    } else if (c === '*') {
      out += '[^/]*';
      while (chars[i] === '*') i++;
    } else if (c === '?') {
      out += '[^/]';
      i++;
    } else if (c === '\\' && i + 1 < chars.length) {
      out += RE2JS.quote(chars[i + 1]!);
      i += 2;
    } else if (c === '[') {
      const end = classEnd(chars, i);
      if (end < 0) {
        out += RE2JS.quote(c);
        i++;
      } else {
        out += classPattern(chars.slice(i + 1, end), field);
        i = end + 1;
      }
    } else if (c === '{') {
      const group = braces(chars, i);
      if (!group) {
        out += RE2JS.quote(c);
        i++;
      } else {
        out += `(?:${group.alternatives.map((a) => translate(a, field)).join('|')})`;
        i = group.end + 1;
      }
    } else {
      out += RE2JS.quote(c);
      i++;
    }
  }
  return out;
}

/** The index of the `]` closing the class opened at `start`, or -1 (then `[` is literal). */
function classEnd(chars: string[], start: number): number {
  let i = start + 1;
  if (chars[i] === '!' || chars[i] === '^') i++;
  if (chars[i] === ']') i++;
  for (; i < chars.length; i++) {
    const c = chars[i];
    if (c === '\\') i++;
    else if (c === '/') return -1;
    else if (c === ']') return i;
  }
  return -1;
}

const SLASH = 0x2f;
const hex = (code: number) => `\\x{${code.toString(16)}}`;

/** A glob class's body as an RE2 class that never matches `/` (a range across it is cut in two). */
function classPattern(body: string[], field: string): string {
  let i = 0;
  const negated = body[0] === '!' || body[0] === '^';
  if (negated) i++;
  // Each character's code, with whether it was escaped (an escaped `-` is no range).
  const codes: { code: number; escaped: boolean }[] = [];
  for (; i < body.length; i++) {
    const escaped = body[i] === '\\' && i + 1 < body.length;
    codes.push({ code: (escaped ? body[++i]! : body[i]!).codePointAt(0)!, escaped });
  }
  let out = '';
  for (let k = 0; k < codes.length; k++) {
    const lo = codes[k]!.code;
    const dash = codes[k + 1];
    if (dash && dash.code === 0x2d && !dash.escaped && k + 2 < codes.length) {
      const hi = codes[k + 2]!.code;
      k += 2;
      if (lo > hi) throw errors.invalidArgument(`${field} is not a valid pattern`, field);
      if (lo <= SLASH && SLASH <= hi) {
        if (lo < SLASH) out += `${hex(lo)}-${hex(SLASH - 1)}`;
        if (hi > SLASH) out += `${hex(SLASH + 1)}-${hex(hi)}`;
      } else {
        out += `${hex(lo)}-${hex(hi)}`;
      }
    } else if (lo !== SLASH) {
      out += hex(lo);
    }
  }
  if (negated) return `[^/${out}]`;
  return out === '' ? '[^\\x{0}-\\x{10ffff}]' : `[${out}]`;
}

/** The alternatives of the `{…}` opened at `start` and the index of its `}`, or undefined when it is not a group of two or more. */
function braces(chars: string[], start: number): { alternatives: string[][]; end: number } | undefined {
  const alternatives: string[][] = [];
  let current: string[] = [];
  let depth = 0;
  for (let i = start + 1; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '\\' && i + 1 < chars.length) {
      current.push(c, chars[++i]!);
    } else if (c === '{') {
      depth++;
      current.push(c);
    } else if (c === '}' && depth > 0) {
      depth--;
      current.push(c);
    } else if (c === '}') {
      alternatives.push(current);
      return alternatives.length > 1 ? { alternatives, end: i } : undefined;
    } else if (c === ',' && depth === 0) {
      alternatives.push(current);
      current = [];
    } else {
      current.push(c);
    }
  }
  return undefined;
}
