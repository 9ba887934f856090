// The scale of a run (BENCH_SCALE) and which scenarios run (BENCH_ONLY).
export const KiB = 1024;
export const MiB = 1024 * KiB;

/**
 * MAX_TREE_ENTRIES of the stack the bench launches and of its floors: the 10k scenarios work on
 * one tree of 10,000 files in 100 folders (10,100 entries, more than the default bound of 10,000,
 * docs/api/files.md#bounded-tree-work), and their figures compare with the runs before the bound.
 */
export const BENCH_MAX_TREE_ENTRIES = 20_000;

/**
 * `full` is the benchmark the targets are about; `tiny` runs every scenario with every size cut
 * down (1 MiB files, 20–50 files, 50 Agents, 1 s load runs) so a smoke test can run the whole
 * harness in seconds and it cannot rot.
 */
export const SCALES = {
  full: {
    name: 'full',
    /** upload-256mib / download-256mib: bytes of the transfer file. */
    transferBytes: 256 * MiB,
    /** How often each transfer is repeated (system and baseline alternate); the median counts. */
    transferRepeats: 3,
    /** upload-1gib-rss-growth: bytes uploaded (the transfer file, sent this many bytes' worth). */
    rssUploadBytes: 1024 * MiB,
    exportFiles: 1000,
    exportBytes: 100 * MiB,
    exportRepeats: 3,
    /** list-10k-files and move-10k: files of the shared tree (folders of 100). */
    listFiles: 10_000,
    /** list-folder-100: files in the one folder listed. */
    folderFiles: 100,
    /** move-10k, restore-10k and checkpoint-10k: rounds on the tree (and on one of its folders, move's and restore's baseline). */
    moveRounds: 10,
    /** rewind-10k: rounds of changes and a rewind, and the changes of each (a quarter of each kind). */
    rewindRounds: 5,
    treeChanges: 1000,
    /** list-page-1000-of-100k: files of the big tree, and the page size. */
    pageFiles: 100_000,
    pageLimit: 1000,
    /** search-10k: source-like text files searched, and the bytes of each (~50 MB in all). */
    searchFiles: 10_000,
    searchFileBytes: 5000,
    /** Big trees are seeded as one uploaded folder of this many files, then copies of it. */
    seedUnitFiles: 1000,
    /** Concurrent uploads when seeding files, and in upload-small (and its direct baseline). */
    fileSeedConcurrency: 16,
    /** upload-small: how many uploads, of how many bytes each. */
    smallUploads: 1000,
    smallBytes: 4 * KiB,
    /** upload-deep: directories above the uploaded file. */
    deepLevels: 200,
    listAgents: 10_000,
    /** tus-unfinished-100: uploads left unfinished, their declared length and the bytes sent (less than a part). */
    tusUploads: 100,
    tusUploadBytes: 20 * MiB,
    tusSentBytes: 7 * MiB,
    /** Seconds of each autocannon run, and of its unmeasured warm-up. */
    durationS: 10,
    warmupS: 2,
    /** Sequential latency runs: at least this long and this many requests. */
    latencyS: 5,
    latencyMinSamples: 50,
    connections: 32,
    patchRounds: 20,
    seedConcurrency: 32,
    /** import-hostile: bytes of the hostile agent.json (the most an archive's may hold), and rounds of 3 concurrent imports of each kind. */
    hostileJsonBytes: 16 * MiB,
    hostileRounds: 5,
    hostileValuesRounds: 1,
    /** mcp-read: MCP sessions reading at once (one call in flight each), and the HTTP reads' concurrency. */
    mcpSessions: 32,
    /** mcp-read and mcp-edit: bytes of the text file read or edited. */
    mcpFileBytes: 4 * KiB,
    /** mcp-edit: sessions editing a file each at once, beside the sequential loop. */
    mcpEditSessions: 8,
    /**
     * noisy-neighbour: seconds of the bystander's loop beside each noise and rounds in turns; the
     * noisy user's large files searched; the entries of the tree it moves (MAX_TREE_ENTRIES's
     * default); its MCP sessions that never read.
     */
    noisySeconds: 5,
    noisyRounds: 2,
    noisySearchFiles: 5,
    noisySearchFileBytes: 1 * MiB,
    noisyTreeEntries: 10_000,
    noisyMcpSessions: 5,
  },
  tiny: {
    name: 'tiny',
    transferBytes: 1 * MiB,
    transferRepeats: 1,
    rssUploadBytes: 4 * MiB,
    exportFiles: 20,
    exportBytes: 2 * MiB,
    exportRepeats: 1,
    listFiles: 20,
    folderFiles: 10,
    moveRounds: 2,
    rewindRounds: 2,
    treeChanges: 20,
    pageFiles: 40,
    pageLimit: 5,
    searchFiles: 200,
    searchFileBytes: 2000,
    seedUnitFiles: 10,
    fileSeedConcurrency: 16,
    smallUploads: 20,
    smallBytes: 4 * KiB,
    deepLevels: 50,
    listAgents: 50,
    tusUploads: 5,
    tusUploadBytes: 2 * MiB,
    tusSentBytes: 1 * MiB,
    durationS: 1,
    warmupS: 0,
    latencyS: 0.5,
    latencyMinSamples: 5,
    connections: 32,
    patchRounds: 3,
    seedConcurrency: 8,
    hostileJsonBytes: 1 * MiB,
    hostileRounds: 1,
    hostileValuesRounds: 1,
    mcpSessions: 4,
    mcpFileBytes: 4 * KiB,
    mcpEditSessions: 2,
    noisySeconds: 0.5,
    noisyRounds: 1,
    noisySearchFiles: 1,
    noisySearchFileBytes: 64 * KiB,
    noisyTreeEntries: 64,
    noisyMcpSessions: 2,
  },
};

export function scaleFromEnv(env = process.env) {
  const name = env.BENCH_SCALE ?? 'full';
  const scale = SCALES[name];
  if (!scale) throw new Error(`BENCH_SCALE must be one of ${Object.keys(SCALES).join(', ')} (got ${name})`);
  // BENCH_OVERRIDES='{"listFiles":500}' changes single knobs (for profiling; results say so).
  const overrides = env.BENCH_OVERRIDES ? JSON.parse(env.BENCH_OVERRIDES) : {};
  const unknown = Object.keys(overrides).filter((k) => !(k in scale));
  if (unknown.length) throw new Error(`BENCH_OVERRIDES names unknown knobs: ${unknown.join(', ')}`);
  return Object.keys(overrides).length ? { ...scale, ...overrides, name: `${scale.name}+${JSON.stringify(overrides)}` } : scale;
}

/** The scenario names (fixed: results are compared across runs by name), in the order they run. */
export const SCENARIO_NAMES = [
  'agent-get',
  'agent-patch',
  'chat-via-routed-alias',
  'agents-list-10k',
  'import-hostile',
  'upload-small',
  'upload-deep',
  'upload-256mib',
  'download-256mib',
  'upload-1gib-rss-growth',
  'tus-unfinished-100',
  'export-1000-files',
  'mcp-read',
  'mcp-edit',
  // The listing and tree scenarios last: their seeds leave the largest indexes behind.
  'list-folder-100',
  'list-10k-files',
  'move-10k',
  'restore-10k',
  'checkpoint-10k',
  'rewind-10k',
  'list-page-1000-of-100k',
  'search-10k',
  'noisy-neighbour',
];

/** BENCH_ONLY=agent-get,list-10k-files runs only those (for profiling one scenario). */
export function selectedScenarios(env = process.env) {
  if (!env.BENCH_ONLY) return SCENARIO_NAMES;
  const wanted = env.BENCH_ONLY.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = wanted.filter((w) => !SCENARIO_NAMES.includes(w));
  if (unknown.length) throw new Error(`BENCH_ONLY names unknown scenarios: ${unknown.join(', ')}`);
  return SCENARIO_NAMES.filter((n) => wanted.includes(n));
}
