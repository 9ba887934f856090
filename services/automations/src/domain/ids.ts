import { randomBytes } from 'node:crypto';

export type IdPrefix = 'sch' | 'trg';

/** `sch_` / `trg_` + 32 lowercase hex of 128 random bits (docs/api/agents.md#identifiers). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}

/** True when `value` has the shape of an id with `prefix`; anything else cannot exist. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return value.length === prefix.length + 33 && value.startsWith(`${prefix}_`) && /^[0-9a-f]{32}$/.test(value.slice(prefix.length + 1));
}
