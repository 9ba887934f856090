/** Length in Unicode code points, so that an emoji counts as one character. */
export function charCount(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

/** True for a string with a lone surrogate, which no UTF-8 encoding can carry. */
export function hasLoneSurrogate(value: string): boolean {
  return /\p{Cs}/u.test(value);
}

/**
 * How names, descriptions and search queries are compared (docs/api/agents.md#normalized-name):
 * Unicode NFKC, trimmed, inner white space collapsed to one space, lower case.
 */
export function normalizeText(value: string): string {
  return value.normalize('NFKC').trim().replace(/\s+/gu, ' ').toLowerCase();
}

/** The key project names compare by (as the projects service does): NFKC, then lower case. */
export function projectKey(name: string): string {
  return name.normalize('NFKC').toLowerCase();
}
