/**
 * Files as MCP resources (docs/api/mcp.md#resources): `/files/a b/c.md` is
 * `workspace:///files/a%20b/c.md`, each segment percent-encoded.
 */
export const URI_PREFIX = 'workspace://';

export function fileUri(path: string): string {
  return `${URI_PREFIX}${path.split('/').map(encodeURIComponent).join('/')}`;
}

/** The workspace path a resource URI names, or undefined when it is not one of ours (or not decodable). */
export function pathOfUri(uri: string): string | undefined {
  if (!uri.startsWith(`${URI_PREFIX}/files`)) return undefined;
  const rest = uri.slice(URI_PREFIX.length);
  if (/[?#]/.test(rest)) return undefined;
  try {
    // Segment by segment, so an encoded `/` (%2F) cannot make two segments of one.
    const segments = rest.split('/').map(decodeURIComponent);
    if (segments.slice(1).some((s) => s.includes('/'))) return undefined;
    return segments.join('/');
  } catch {
    return undefined;
  }
}
