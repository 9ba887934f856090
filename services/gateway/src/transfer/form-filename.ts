/**
 * The WHATWG HTML form encoding of a multipart/form-data file name: browsers write `"` as
 * `%22`, CR as `%0D` and LF as `%0A` (and nothing else percent-encoded), so a name such as
 * `résumé "final".pdf` arrives as `résumé %22final%22.pdf`. Those three escapes, and only they,
 * are undone; any other `%xx` is the name's own text. (A literal `%22` in a name is
 * indistinguishable from an encoded `"`: the standard accepts that ambiguity, and so do we.)
 */
const ESCAPES: Record<string, string> = { '%22': '"', '%0D': '\r', '%0A': '\n' };

export function decodeFormFilename(name: string): string {
  return name.replace(/%(?:22|0[dD]|0[aA])/g, (escape) => ESCAPES[escape.toUpperCase()]!);
}
