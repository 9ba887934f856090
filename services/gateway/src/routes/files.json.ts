import { OnConflict, type Change } from '@workspace/proto/workspace/files/v1/files';

/** `onConflict` as the API spells it (docs/api/files.md#upload, docs/api/files.md#move-and-copy); its schema accepts only these keys. */
export const CONFLICT_MODES = {
  error: OnConflict.ON_CONFLICT_ERROR,
  overwrite: OnConflict.ON_CONFLICT_OVERWRITE,
  uuid: OnConflict.ON_CONFLICT_UUID,
} as const satisfies Record<string, OnConflict>;

export type ConflictMode = keyof typeof CONFLICT_MODES;

/** The proto value of a mode, or undefined for anything else (a form field is not schema-checked). */
export function conflictMode(mode: string): OnConflict | undefined {
  return Object.hasOwn(CONFLICT_MODES, mode) ? CONFLICT_MODES[mode as ConflictMode] : undefined;
}

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
