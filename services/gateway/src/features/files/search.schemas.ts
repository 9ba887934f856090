import { z } from 'zod';
import { booleanQuery, integerQuery, wellFormed, workspacePath } from '../../api/schemas.js';

/** Characters as people count them: code points, not UTF-16 units. */
const codePoints = (value: string) => [...value].length;

export const SearchQuery = z
  .object({
    q: wellFormed(z.string())
      .refine((v) => codePoints(v) >= 1 && codePoints(v) <= 1_000, 'q must be 1–1,000 characters')
      .describe('What to find: literal text, or with `regex=true` an RE2 pattern (no backreferences or look-around). 1–1,000 characters'),
    path: workspacePath.optional().describe('default `/files`: the folder (or file) searched, with everything below it'),
    regex: booleanQuery.optional().describe('default false: `q` is literal text; true: `q` is an RE2 pattern (a pattern RE2 refuses → 400 INVALID_ARGUMENT, field `q`)'),
    caseSensitive: booleanQuery.optional().describe('default false: letters match in either case (Unicode simple case folding)'),
    glob: wellFormed(z.string())
      .refine((v) => codePoints(v) >= 1 && codePoints(v) <= 1_000, 'glob must be 1–1,000 characters')
      .optional()
      .describe('Files to include, matched against the path relative to `path`: without `/` the file name at any depth (`*.md`); `**` is zero or more folders (`src/**/*.ts`); `*` also matches names starting with a dot'),
    limit: integerQuery('limit', 1, 1_000).optional().describe('1–1,000, default 100: matches per page'),
    cursor: z
      .string()
      .min(1)
      .optional()
      .describe('The `cursor` of the previous page, asked with the same q, path, regex, caseSensitive and glob; opaque; one altered or issued for another search → 400 INVALID_ARGUMENT'),
  })
  .strict();

export const SearchMatch = z
  .object({
    path: z.string(),
    line: z.number().int().describe('1-based'),
    column: z.number().int().describe('1-based, in code points'),
    text: z.string().describe('The whole line (without its line break), cut to its first 500 characters'),
    sha256: z.string().describe('SHA-256 of the file\'s bytes searched, 64 lowercase hex'),
  })
  .meta({ id: 'SearchMatch' });

export const searchResultExample = {
  path: '/files',
  q: 'TODO',
  matches: [{ path: '/files/src/app.ts', line: 12, column: 8, text: '    // TODO: retry', sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824' }],
  cursor: null,
  hasMore: false,
  filesSearched: 3,
};

export const SearchResult = z
  .object({
    path: z.string().describe('The searched path, normalized'),
    q: z.string(),
    matches: z.array(SearchMatch).describe('By path (UTF-8 byte order), then line, then column; each occurrence on a line is one match'),
    cursor: z.string().nullable().describe('Pass it as `cursor` for the next page; null on the last page'),
    hasMore: z.boolean().describe('Whether another page follows'),
    filesSearched: z.number().int().describe('Files whose content this page examined (text files within the size limit that the glob includes)'),
  })
  .meta({
    id: 'SearchResult',
    examples: [
      searchResultExample,
    ],
  });
