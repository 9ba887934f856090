/**
 * The literal texts every match of an RE2 pattern must contain, found conservatively: runs of
 * plain characters at the top level of the pattern, outside groups, classes and optional
 * repetitions. Whatever this scanner does not understand yields nothing (then every file is a
 * candidate), so the answer never depends on it; it only narrows which files are read.
 */

const META = new Set(['\\', '.', '+', '*', '?', '(', ')', '|', '[', '{', '^', '$']);
/** Escapes that stand for one literal character. */
const LITERAL_ESCAPE = /^[!-/:-@[-`{-~]$/;
/** Escapes of a class or an assertion: they end a run. */
const OTHER_ESCAPE = /^[dDsSwWbBAzntrfv]$/;
const REPEAT = /^\{(\d+)(,\d*)?\}/;

/** The required literal runs of `pattern`, or [] when none are certain. */
export function requiredLiterals(pattern: string): string[] {
  const chars = [...pattern];
  const runs: string[] = [];
  let run: string[] = [];
  const cut = () => {
    if (run.length > 0) runs.push(run.join(''));
    run = [];
  };
  let i = 0;
  while (i < chars.length) {
    const c = chars[i]!;
    if (c === '|') return [];
    if (c === '\\') {
      const next = chars[i + 1] ?? '';
      if (LITERAL_ESCAPE.test(next)) run.push(next);
      else if (OTHER_ESCAPE.test(next)) cut();
      else return [];
      i += 2;
    } else if (c === '(') {
      cut();
      const end = skipGroup(chars, i);
      if (end < 0) return [];
      i = end;
    } else if (c === '[') {
      cut();
      const end = skipClass(chars, i);
      if (end < 0) return [];
      i = end;
    } else if (c === '*' || c === '?') {
      run.pop(); // the previous character was optional
      cut();
      i += chars[i + 1] === '?' ? 2 : 1;
    } else if (c === '+') {
      cut(); // it occurs at least once, then anything may repeat
      i += chars[i + 1] === '?' ? 2 : 1;
    } else if (c === '{') {
      const m = REPEAT.exec(chars.slice(i, i + 40).join(''));
      if (!m) {
        run.push(c);
        i += 1;
        continue;
      }
      if (Number(m[1]) === 0) run.pop();
      cut();
      i += [...m[0]].length;
      if (chars[i] === '?') i += 1;
    } else if (META.has(c)) {
      cut();
      i += 1;
    } else {
      // A plain character followed by a quantifier is handled when the quantifier is read.
      run.push(c);
      i += 1;
    }
  }
  cut();
  return runs;
}

/** The index after the `)` closing the group opened at `start`, or -1. */
function skipGroup(chars: string[], start: number): number {
  let depth = 0;
  for (let i = start; i < chars.length; i++) {
    const c = chars[i];
    if (c === '\\') i += 1;
    else if (c === '[') {
      const end = skipClass(chars, i);
      if (end < 0) return -1;
      i = end - 1;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i + 1;
  }
  return -1;
}

/** The index after the `]` closing the class opened at `start`, or -1. */
function skipClass(chars: string[], start: number): number {
  let i = start + 1;
  if (chars[i] === '^') i++;
  if (chars[i] === ']') i++;
  for (; i < chars.length; i++) {
    const c = chars[i];
    if (c === '\\') i += 1;
    else if (c === '[' && chars[i + 1] === ':') {
      const close = chars.indexOf(']', i + 2);
      if (close < 0) return -1;
      i = close;
    } else if (c === ']') return i + 1;
  }
  return -1;
}
