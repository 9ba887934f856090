import { RE2JS } from 're2js';
import { errors, literalTrigrams } from '@workspace/platform';
import { requiredLiterals } from './query-literals.js';

/** `q` is 1–1,000 characters (code points) (docs/api/files.md#search). */
export const MAX_QUERY_CHARS = 1_000;
/** A match's `text` is its line cut to this many characters (code points). */
export const MAX_LINE_CHARS = 500;
/**
 * The most instructions a compiled `q` may have (docs/api/files.md#search). RE2's time is linear
 * in the text but grows with the program: counted repetitions (`[^\n]{0,999}` eighty times is
 * ~160,000 instructions) made one 1 MiB file hold the service for minutes. Any literal `q`
 * (1,000 characters: ~1,000 instructions, in any case) fits.
 */
export const MAX_PATTERN_INSTRUCTIONS = 1_100;

/** One occurrence in a file: 1-based line, 1-based column in code points, the line's text (cut). */
export interface LineMatch {
  line: number;
  column: number;
  text: string;
}

/** A query compiled once per request: the trigrams it needs, and the exact matcher. */
export interface CompiledQuery {
  /** Folded trigrams every matching line contains (see packages/platform/src/content-summary.ts); [] = any file may match. */
  trigrams: number[];
  /**
   * The matches of `text` after (line, column) `after` ([0, 0] = all), at most `max`, in
   * line then column order; every occurrence on a line (after an empty match the next try starts
   * one character on).
   */
  matches(text: string, after: readonly [number, number], max: number): LineMatch[];
}

/** What a search asks of each file's text, as it crosses to a matching worker: compileQuery's arguments. */
export interface QuerySpec {
  q: string;
  regex: boolean;
  caseSensitive: boolean;
}

/** RE2 refuses the pattern → 400 INVALID_ARGUMENT on `q`; else the compiled query. */
export function compileQuery(q: string, regex: boolean, caseSensitive: boolean): CompiledQuery {
  const length = [...q].length;
  if (length < 1 || length > MAX_QUERY_CHARS) throw errors.invalidArgument(`q must be 1–${MAX_QUERY_CHARS} characters`, 'q');
  const pattern = regex ? q : RE2JS.quote(q);
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern, RE2JS.MULTILINE | (caseSensitive ? 0 : RE2JS.CASE_INSENSITIVE));
  } catch (err) {
    const why = err instanceof Error ? err.message : 'invalid pattern';
    throw errors.invalidArgument(`q is not a pattern RE2 accepts: ${why}`, 'q');
  }
  if (re.programSize() > MAX_PATTERN_INSTRUCTIONS) {
    throw errors.invalidArgument(`q compiles to ${re.programSize()} RE2 instructions, more than ${MAX_PATTERN_INSTRUCTIONS}: use smaller repetition counts`, 'q');
  }
  const literals = regex ? requiredLiterals(q) : [q];
  // A flag group may turn case folding on for part of the pattern: then only ASCII trigrams hold.
  const exactCase = caseSensitive && !(regex && q.includes('(?'));
  const trigrams = [...new Set(literals.flatMap((l) => literalTrigrams(l, exactCase)))];
  return { trigrams, matches: (text, after, max) => findMatches(re, text, after, max) };
}

/**
 * Line by line (a line is the text between two `\n`, or the text's start or end: an empty text is
 * one empty line). Each line is first tested whole (RE2's test is one pass over it, no captures),
 * and only a line that matches is searched for its occurrences: the time is linear in the text
 * for every pattern, with the occurrences on top. A match of the whole text from each line start
 * instead crossed `\n` into the rest of the text and made `a[^#]*b` quadratic in the file.
 */
function findMatches(re: RE2JS, text: string, after: readonly [number, number], max: number): LineMatch[] {
  const out: LineMatch[] = [];
  let lineNo = 1;
  for (let start = 0; out.length < max; lineNo++) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl;
    if (lineNo >= after[0]) {
      const line = text.slice(start, end);
      if (re.test(line)) lineMatches(re, line, lineNo, lineNo === after[0] ? after[1] : 0, max - out.length, out);
    }
    if (nl === -1) break;
    start = nl + 1;
  }
  return out;
}

function lineMatches(re: RE2JS, line: string, lineNo: number, afterColumn: number, max: number, out: LineMatch[]): void {
  const m = re.matcher(line);
  let text: string | undefined;
  let counted = 0;
  let column = 1;
  let from = 0;
  while (max > 0 && from <= line.length && m.find(from)) {
    const s = m.start();
    const e = m.end();
    column += codePoints(line, counted, s);
    counted = s;
    if (column > afterColumn) {
      text ??= cut(line);
      out.push({ line: lineNo, column, text });
      max--;
    }
    from = e > s ? e : s + (isHighSurrogate(line.charCodeAt(s)) && s + 1 < line.length ? 2 : 1);
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Code points in line[from, to). */
function codePoints(line: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (!(isHighSurrogate(line.charCodeAt(i)) && i + 1 < to)) n++;
  return n;
}

/** The first MAX_LINE_CHARS code points. */
function cut(line: string): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  let n = 0;
  let i = 0;
  while (i < line.length && n < MAX_LINE_CHARS) {
    i += isHighSurrogate(line.charCodeAt(i)) && i + 1 < line.length ? 2 : 1;
    n++;
  }
  return line.slice(0, i);
}
