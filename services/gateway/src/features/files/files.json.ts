import type { Change } from '@workspace/proto/workspace/files/v1/files';

/** A change (docs/api/files.md#changes): `from` only for a move; `size` and `sha256` only where the service set a size. */
export function changeJson(c: Change) {
  return {
    type: c.type,
    kind: c.kind,
    path: c.path,
    ...(c.type === 'moved' && { from: c.from }),
    at: c.at,
    ...(c.size !== undefined && { size: c.size, sha256: c.sha256 }),
  };
}
