/**
 * Glob patterns over workspace names (docs/api/mcp.md#tools): `*` and `?` stay within a name,
 * `**` spans zero or more folders, `[…]` a character class, `{a,b}` alternatives. A pattern
 * without `/` matches the name at any depth; one with `/` the path relative to the search root.
 */
export function globMatcher(pattern: string): (relativePath: string) => boolean {
  const re = new RegExp(`^${translate(pattern)}$`, 'u');
  if (pattern.includes('/')) return (rel) => re.test(rel);
  return (rel) => re.test(rel.slice(rel.lastIndexOf('/') + 1));
}

const escape = (c: string) => c.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');

function translate(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        const slashAfter = pattern[i + 2] === '/';
        const atSegmentStart = i === 0 || pattern[i - 1] === '/';
        i += slashAfter ? 2 : 1;
        out += atSegmentStart && slashAfter ? '(?:[^/]*/)*' : '.*';
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end === -1) out += '\\[';
      else {
        const body = pattern.slice(i + 1, end);
        const negated = body.startsWith('!') || body.startsWith('^');
        out += `[${negated ? '^' : ''}${(negated ? body.slice(1) : body).replace(/[\\\]]/g, '\\$&')}]`;
        i = end;
      }
    } else if (c === '{') {
      const end = pattern.indexOf('}', i);
      if (end === -1) out += '\\{';
      else {
        out += `(?:${pattern.slice(i + 1, end).split(',').map(translate).join('|')})`;
        i = end;
      }
    } else out += escape(c);
  }
  return out;
}
