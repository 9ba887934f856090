// The tree scenarios: list-folder-100, list-10k-files, move-10k, restore-10k. The 10k tree is seeded once
// (one folder uploaded, copies of it) and shared, with checkpoint-10k, rewind-10k
// (files-checkpoints.mjs) and list-page-1000-of-100k too.
import { performance } from 'node:perf_hooks';
import { cpuMeter, cpuPer, cpuPerUnit } from '../lib/cpu.mjs';
import { expectStatus, median, pool, quantile } from '../lib/http.mjs';
import { putBuffer, timedList } from '../lib/s3.mjs';
import { distinctContents, fileNames, seedTree, treeOp, uploadMany } from '../lib/seed.mjs';
import { startFilesFloor } from '../lib/floor-files.mjs';
import { addCpu, floorListLoop, floorNote, floorStep, fmt, getJson, measuredLoop, q, redisNote, redisTimed, stackPids, timedLoop } from './files-shared.mjs';

/** A loop stops after this long once it has one sample. */
const MAX_SECONDS = 30;

/**
 * The shared tree: `listFiles` files at /files/list/dNNN/, 100 a folder (fewer in small runs,
 * so that even they hold several folders and exercise the copy route). Seeded once per run.
 */
export function tree10k(ctx) {
  ctx.shared.tree10k ??= (async () => {
    const user = await ctx.newUser('tree');
    const perDir = Math.min(100, Math.ceil(ctx.scale.listFiles / 4));
    const dirs = Math.ceil(ctx.scale.listFiles / perDir);
    const root = '/files/list';
    const unitName = (u) => `d${String(u).padStart(3, '0')}`;
    const names = fileNames(perDir, perDir);
    const seed = await seedTree(ctx, user, { root, units: dirs, unitName, unitFiles: names });
    return { user, root, files: seed.files, dirs, perDir, names, unitName, seed };
  })();
  return ctx.shared.tree10k;
}

/** `names` below `prefix` in the bench's own bucket, `concurrency` PUTs at a time: what the store lists directly. */
async function putKeys(ctx, s3, prefix, names) {
  const content = distinctContents(64);
  await pool(names, ctx.scale.fileSeedConcurrency, (name, i) => putBuffer(s3.client, s3.bucket, `${prefix}${name}`, content(i)));
}

const latencyOpts = (scale) => ({ seconds: scale.latencyS, minSamples: Math.min(scale.latencyMinSamples, 20), maxSeconds: MAX_SECONDS });

export async function listFolder100(ctx) {
  const { scale } = ctx;
  const user = await ctx.newUser('folder');
  const names = fileNames(scale.folderFiles, scale.folderFiles);
  const folder = '/files/folder';
  const seed = await uploadMany(ctx, user, names.map((n) => `${folder}/${n}`), { content: distinctContents(64) });
  const s3 = await ctx.baselineS3();
  const opts = latencyOpts(scale);
  let direct;
  if (s3) {
    await putKeys(ctx, s3, 'folder100/', names);
    direct = await timedLoop(async () => {
      const started = performance.now();
      const page = await s3.client.listObjectsV2Query(s3.bucket, 'folder100/', '', '/', 1000, '');
      if (page.objects.filter((o) => o.name).length !== names.length) throw new Error('direct LIST: wrong count');
      return performance.now() - started;
    }, opts);
  }
  const url = `${ctx.target.url}/v1/agent/files?path=${q(folder)}`;
  const { body, res } = await getJson(url, user);
  if (body.entries?.length !== names.length) throw new Error(`list ${folder}: ${body.entries?.length} entries (want ${names.length})`);
  const system = await measuredLoop(ctx, url, { authorization: `Bearer ${user.token}` }, opts);
  const floor = await floorListLoop(ctx, user, { path: folder }, opts);
  sameBytes(ctx, 'list-folder-100', res.bytes, floor);
  return {
    value: system.p50,
    unit: 'ms',
    baseline: direct?.p50 ?? null,
    floor: floor?.p50 ?? null,
    p50: system.p50,
    p99: system.p99,
    cpu: listCpu(system, floor),
    notes:
      `One folder of ${names.length} files (uploaded at ${scale.fileSeedConcurrency} concurrent in ${fmt(seed.seconds, 2)} s), listed with sizes, ${fmt(res.bytes / 1024, 1)} KiB of JSON; ` +
      `sequential, ${system.samples} requests, ${cpuPer(system.cpu, system.samples, 'request')}. ` +
      (direct
        ? `Baseline: ListObjectsV2 of the same names in one prefix of the same store (delimiter /), p50 ${fmt(direct.p50)} ms, p99 ${fmt(direct.p99)} ms over ${direct.samples}.`
        : 'No baseline: no S3 settings.') +
      floorNote("one ZRANGEBYLEX of the folder's child set rendered as the same JSON by one bare process (bench/lib/floor-files.mjs)", floor, floor?.samples, 'request'),
  };
}

/** The direct recursive LIST of the tree's names in the bench's bucket, timed like the system's. */
async function directTreeList(ctx, s3, tree, opts) {
  const prefix = 'list10k/';
  const names = Array.from({ length: tree.dirs }, (_, d) => tree.names.map((n) => `${tree.unitName(d)}/${n}`)).flat();
  const started = performance.now();
  await putKeys(ctx, s3, prefix, names);
  const seedS = (performance.now() - started) / 1000;
  const pageMs = [];
  let incomplete;
  const loop = await timedLoop(async () => {
    const listed = await timedList(s3.client, s3.bucket, prefix, MAX_SECONDS);
    if (!listed.complete) incomplete = listed;
    else if (listed.count !== names.length) throw new Error(`direct LIST found ${listed.count} keys (want ${names.length})`);
    pageMs.push(...listed.pages);
    return listed.ms;
  }, { ...opts, minSamples: Math.min(opts.minSamples, 5) });
  if (incomplete) {
    return `Baseline: a direct recursive ListObjectsV2 of the same names did not finish in ${MAX_SECONDS} s (${incomplete.count} keys in ${incomplete.pages.length} pages)`;
  }
  return {
    ...loop,
    note:
      `Baseline: direct recursive ListObjectsV2 of the same ${names.length} names in the same store (PUT there at ${ctx.scale.fileSeedConcurrency} concurrent in ${fmt(seedS)} s; ` +
      `1,000 per page, a page p50 ${fmt(quantile(pageMs, 0.5))} ms), p50 ${fmt(loop.p50)} ms, p99 ${fmt(loop.p99)} ms over ${loop.samples}`,
  };
}

/** A floor's JSON must be the system's, byte for byte in length, or the comparison says nothing. */
function sameBytes(ctx, scenario, bytes, floor) {
  if (floor && floor.bytes !== bytes) ctx.problem(scenario, `the floor answered ${floor.bytes} bytes of JSON, the system ${bytes}`);
}

/** The `cpu` field of a listing against its floor. */
const listCpu = (system, floor) => ({ per: 'request', system: cpuPerUnit(system.cpu, system.samples), ...(floor && { floor: cpuPerUnit(floor.cpu, floor.samples) }) });

const treeListUrl = (ctx, tree) => `${ctx.target.url}/v1/agent/files?path=${q(tree.root)}&recursive=true`;

/**
 * What the whole-tree operations are held to: the p50 of list-10k-files in this run, or when it
 * was not selected, of the same listing measured here (once per run). → {p50, how}.
 */
export async function listBaseline(ctx, tree) {
  if (ctx.shared.list10k) return ctx.shared.list10k;
  const loop = await measuredLoop(ctx, treeListUrl(ctx, tree), { authorization: `Bearer ${tree.user.token}` }, latencyOpts(ctx.scale));
  ctx.shared.list10k = { p50: loop.p50, how: `its recursive listing, measured here (list-10k-files did not run): p50 ${fmt(loop.p50)} ms over ${loop.samples}` };
  return ctx.shared.list10k;
}

/** The metric and the sentence of a whole-tree operation's p50 against the listing's. */
export function overList(p50, list) {
  const ratio = p50 / list.p50;
  return { ratio, text: `p50 ÷ the listing's p50 ${fmt(ratio, 2)} (${list.how})` };
}

export async function list10k(ctx) {
  const { scale } = ctx;
  const tree = await tree10k(ctx);
  const { user } = tree;
  const opts = latencyOpts(scale);
  const s3 = await ctx.baselineS3();
  // First the store alone, while nothing else uses it.
  const direct = s3 ? await directTreeList(ctx, s3, tree, opts) : undefined;
  const url = treeListUrl(ctx, tree);
  const { body, res } = await getJson(url, user);
  const want = tree.files + tree.dirs;
  if (body.entries?.length !== want) throw new Error(`list: ${body.entries?.length} entries (want ${want})`);
  if (body.hasMore) throw new Error('list: a listing without limit answered hasMore (not the whole tree)');
  const system = await measuredLoop(ctx, url, { authorization: `Bearer ${user.token}` }, opts);
  ctx.shared.list10k = { p50: system.p50, how: `list-10k-files in this run: p50 ${fmt(system.p50)} ms` };
  const floor = await floorListLoop(ctx, user, { path: tree.root, recursive: true }, opts);
  sameBytes(ctx, 'list-10k-files', res.bytes, floor);
  const directNote = typeof direct === 'string' ? direct : (direct?.note ?? 'No baseline: no S3 settings');
  return {
    value: system.p50,
    unit: 'ms',
    baseline: typeof direct === 'object' ? direct.p50 : null,
    floor: floor?.p50 ?? null,
    p50: system.p50,
    p99: system.p99,
    cpu: listCpu(system, floor),
    notes:
      `${tree.files} files in ${tree.dirs} folders (seeded: ${tree.seed.how}); recursive list without limit of ${want} entries, ${fmt(res.bytes / 1024, 0)} KiB of JSON; ` +
      `sequential, ${system.samples} requests, ${cpuPer(system.cpu, system.samples, 'request')}. ${directNote}.` +
      floorNote("one ZRANGEBYLEX of the tree's sorted set rendered as the same JSON by one bare process (bench/lib/floor-files.mjs)", floor, floor?.samples, 'request'),
  };
}

/**
 * The floor's side of a whole-tree scenario: its step times and its process's CPU, gathered
 * round by round ({add, p50(), cpu(), note()}); a no-op where there is no floor.
 */
export async function floorSteps(ctx) {
  const floor = await startFilesFloor(ctx);
  const times = [];
  let cpu = 0;
  return {
    floor,
    async add(steps) {
      const meter = cpuMeter({ floor: floor.pid });
      for (const step of steps) times.push((await step()).ms);
      cpu += meter().floor ?? 0;
    },
    p50: () => (times.length ? median(times) : null),
    cpu: () => (times.length ? { floor: { floor: Number((cpu / times.length).toFixed(3)) } } : {}),
    note: (what, unit) => (floor ? floorNote(what, { p50: median(times), p99: quantile(times, 0.99), cpu: { floor: cpu } }, times.length, unit) : floorNote('', undefined)),
  };
}

/**
 * One round of the floor's steps, where there is a floor: `before` (functions, each starting a
 * step) run first and are not measured, then `steps`, one after the other.
 */
export async function floorRound(floor, steps, before = []) {
  if (!floor.floor) return;
  for (const step of before) await step();
  await floor.add(steps);
}

/** Moves `from` → `to` and back; resolves with the two steps ({ms, redisMs}). */
async function roundTrip(ctx, user, from, to) {
  const there = await redisTimed(ctx, user, () => treeOp(user, 'move', from, to));
  const back = await redisTimed(ctx, user, () => treeOp(user, 'move', to, from));
  return [there, back];
}

export async function move10k(ctx) {
  const { scale } = ctx;
  const tree = await tree10k(ctx);
  const { user, root } = tree;
  const away = `${root}-moved`;
  const folder = `${root}/${tree.unitName(0)}`;
  const folderAway = '/files/moved-folder';
  // Unmeasured first round trip, checked: everything arrives, nothing stays behind.
  await treeOp(user, 'move', root, away);
  const { body } = await getJson(`${ctx.target.url}/v1/agent/files?path=${q(away)}&recursive=true&includeStats=false`, user);
  const gone = await user.call('GET', `/v1/agent/files?path=${q(root)}`);
  await treeOp(user, 'move', away, root);
  if (body.entries?.length !== tree.files + tree.dirs) throw new Error(`after a move: ${body.entries?.length} entries (want ${tree.files + tree.dirs})`);
  if (gone.status !== 404) throw new Error(`after a move, the source still lists (HTTP ${gone.status})`);
  const steps = [];
  const small = [];
  const cpu = {};
  const floor = await floorSteps(ctx);
  const started = performance.now();
  // The 10k tree, one of its folders and the floor alternate, so drift on a shared machine hits them alike.
  for (let r = 0; r < scale.moveRounds && !(r > 0 && (performance.now() - started) / 1000 >= 2 * MAX_SECONDS); r++) {
    const meter = cpuMeter(stackPids(ctx));
    steps.push(...(await roundTrip(ctx, user, root, away)));
    addCpu(cpu, meter());
    small.push(...(await roundTrip(ctx, user, folder, folderAway)).map((m) => m.ms));
    await floorRound(floor, [() => floorStep(ctx, 'move', user, { from: root, to: away }), () => floorStep(ctx, 'move', user, { from: away, to: root })]);
  }
  const big = steps.map((m) => m.ms);
  const list = overList(median(big), await listBaseline(ctx, tree));
  return {
    value: median(big),
    unit: 'ms',
    baseline: median(small),
    floor: floor.p50(),
    p50: median(big),
    p99: quantile(big, 0.99),
    cpu: { per: 'move', system: cpuPerUnit(cpu, big.length), ...floor.cpu() },
    notes:
      `POST /v1/agent/files/move of a folder of ${tree.files} files in ${tree.dirs} folders, back and forth, ${big.length} moves: p50 ${fmt(median(big))} ms, p99 ${fmt(quantile(big, 0.99))} ms, ` +
      `${cpuPer(cpu, big.length, 'move')} (Redis's own not counted: the index works there).${redisNote(steps)} Baseline: moving one of its folders (${tree.perDir} files) the same way, alternated: ` +
      `p50 ${fmt(median(small))} ms, p99 ${fmt(quantile(small, 0.99))} ms over ${small.length} (ratio ≈ 1 would be a move independent of the tree's size). ${list.text}.` +
      floor.note('the same move script sent by one bare process (bench/lib/floor-files.mjs), alternated', 'move'),
    metrics: { overList: list.ratio },
  };
}

/** Deletes `path` recursively, then restores it from the trash in one call; checks the count. The restore step: {ms, redisMs}. */
async function deleteAndRestore(ctx, user, path, files) {
  expectStatus(await user.call('DELETE', `/v1/agent/files?path=${q(path)}&recursive=true`), 200, `delete ${path}`);
  const res = await redisTimed(ctx, user, async () => expectStatus(await user.call('POST', '/v1/agent/files/restore', { path, recursive: true }), 200, `restore ${path}`));
  if (res.body?.restored !== files) throw new Error(`restore ${path}: ${res.body?.restored} files restored (want ${files})`);
  return res;
}

export async function restore10k(ctx) {
  const { scale } = ctx;
  const tree = await tree10k(ctx);
  const { user, root } = tree;
  const folder = `${root}/${tree.unitName(0)}`;
  // Unmeasured first round, checked: every file is back.
  await deleteAndRestore(ctx, user, root, tree.files);
  const { body } = await getJson(`${ctx.target.url}/v1/agent/files?path=${q(root)}&recursive=true&includeStats=false`, user);
  if (body.entries?.length !== tree.files + tree.dirs) throw new Error(`after a restore: ${body.entries?.length} entries (want ${tree.files + tree.dirs})`);
  const steps = [];
  const small = [];
  const cpu = {};
  const floor = await floorSteps(ctx);
  const started = performance.now();
  // The 10k tree, one of its folders and the floor alternate, so drift on a shared machine hits them alike.
  for (let r = 0; r < scale.moveRounds && !(r > 0 && (performance.now() - started) / 1000 >= 2 * MAX_SECONDS); r++) {
    const meter = cpuMeter(stackPids(ctx));
    steps.push(await deleteAndRestore(ctx, user, root, tree.files));
    addCpu(cpu, meter());
    small.push((await deleteAndRestore(ctx, user, folder, tree.perDir)).ms);
    await floorRound(floor, [() => floorStep(ctx, 'restore', user, { path: root })], [() => floorStep(ctx, 'delete', user, { path: root })]);
  }
  const big = steps.map((m) => m.ms);
  const list = overList(median(big), await listBaseline(ctx, tree));
  return {
    value: median(big),
    unit: 'ms',
    baseline: median(small),
    floor: floor.p50(),
    p50: median(big),
    p99: quantile(big, 0.99),
    cpu: { per: 'round', system: cpuPerUnit(cpu, big.length), ...floor.cpu() },
    notes:
      `POST /v1/agent/files/restore {recursive: true} of a folder of ${tree.files} files in ${tree.dirs} folders just deleted (DELETE recursive=true, not measured), ` +
      `${big.length} rounds: p50 ${fmt(median(big))} ms, p99 ${fmt(quantile(big, 0.99))} ms, ${cpuPer(cpu, big.length, 'round')} (delete and restore; Redis's own not counted).${redisNote(steps)} ` +
      `Baseline: the same for one of its folders (${tree.perDir} files), alternated: p50 ${fmt(median(small))} ms over ${small.length}. ${list.text}.` +
      floor.note('the same restore script sent by one bare process after its own recursive delete (bench/lib/floor-files.mjs), alternated; CPU of the restore alone', 'restore'),
    metrics: { overList: list.ratio },
  };
}
