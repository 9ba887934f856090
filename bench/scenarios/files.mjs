// The files scenarios, one module per kind (see docs/benchmarks.md); baselines talk to the same
// S3 server directly with the minio client, or compare the system with itself at another size.
export { uploadSmall, uploadDeep } from './files-small.mjs';
export { upload256, download256, uploadRssGrowth } from './files-transfer.mjs';
export { export1000 } from './files-export.mjs';
export { listFolder100, list10k, move10k, restore10k } from './files-tree.mjs';
export { checkpoint10k, rewind10k } from './files-checkpoints.mjs';
export { listPage } from './files-page.mjs';
