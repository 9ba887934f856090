/**
 * The index of a configuration whose `parentConfigId` chain comes back to one already on it
 * (A → B → A, or a config its own parent), if any; chains that end at no parent or at a config
 * outside the list are fine. Linear: each config is followed once.
 */
export function lineageCycle(configs: readonly { configId: string; parentConfigId?: string | null | undefined }[]): number | undefined {
  const index = new Map(configs.map((c, i) => [c.configId, i]));
  // 0: not seen, 1: on the chain being followed, 2: known to end (at no parent or outside the list).
  const state = new Uint8Array(configs.length);
  for (let start = 0; start < configs.length; start++) {
    const chain: number[] = [];
    let at: number | undefined = start;
    while (at !== undefined && state[at] === 0) {
      state[at] = 1;
      chain.push(at);
      const parent: string | null | undefined = configs[at]!.parentConfigId;
      at = parent ? index.get(parent) : undefined;
    }
    if (at !== undefined && state[at] === 1) return at;
    for (const i of chain) state[i] = 2;
  }
  return undefined;
}
