/**
 * The configurations to delete so that at most `retention` remain: the oldest first, never the
 * current one, never one a chat pins. `oldestFirst` lists every stored config id by age.
 * When too many are pinned, fewer are deleted and more than `retention` stay.
 */
export function expiredConfigs(options: {
  oldestFirst: readonly string[];
  currentConfigId: string;
  pinned: ReadonlySet<string>;
  retention: number;
}): string[] {
  let excess = options.oldestFirst.length - options.retention;
  const expired: string[] = [];
  for (const id of options.oldestFirst) {
    if (excess <= 0) break;
    if (id === options.currentConfigId || options.pinned.has(id)) continue;
    expired.push(id);
    excess--;
  }
  return expired;
}
