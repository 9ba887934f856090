// checkpoint-10k and rewind-10k (docs/api/files.md#checkpoints, docs/api/files.md#rewind) on the
// shared 10k tree, each held to the recursive listing of that tree (listBaseline): a checkpoint
// reads what the listing reads and records every file, a rewind compares two such records.
import { performance } from 'node:perf_hooks';
import { cpuMeter, cpuPer } from '../lib/cpu.mjs';
import { expectStatus, median, pool, quantile, upload } from '../lib/http.mjs';
import { distinctContents, treeOp } from '../lib/seed.mjs';
import { randomBytes } from 'node:crypto';
import { addCpu, floorStep, fmt, getJson, q, redisNote, redisTimed, stackPids } from './files-shared.mjs';
import { floorRound, floorSteps, listBaseline, overList, tree10k } from './files-tree.mjs';
import { cpuPerUnit } from '../lib/cpu.mjs';

const newCheckpointId = () => `ckp_${randomBytes(16).toString('hex')}`;

/** Rounds stop after this long once one was measured. */
const MAX_SECONDS = 60;

async function takeCheckpoint(user, path) {
  const res = expectStatus(await user.call('POST', '/v1/agent/files/checkpoints', { path, label: 'bench' }), 201, `checkpoint ${path}`);
  return { id: res.body.checkpointId, files: res.body.files, ms: res.ms };
}

/** Checkpoints count toward MAX_CHECKPOINTS: every one the bench takes (or a rewind takes) goes again. */
async function dropCheckpoint(user, id) {
  expectStatus(await user.call('DELETE', `/v1/agent/files/checkpoints/${id}`), 204, `delete checkpoint ${id}`);
}

/** Runs `round(r)` (resolving with {ms, redisMs, cpu}) `rounds` times, or fewer once MAX_SECONDS passed; its CPU summed. */
async function measuredRounds(ctx, rounds, round) {
  const steps = [];
  const cpu = {};
  const started = performance.now();
  for (let r = 0; r < rounds && !(r > 0 && (performance.now() - started) / 1000 >= MAX_SECONDS); r++) {
    const step = await round(r);
    steps.push(step);
    addCpu(cpu, step.cpu);
  }
  const times = steps.map((s) => s.ms);
  return { steps, times, cpu, p50: median(times), p99: quantile(times, 0.99) };
}

export async function checkpoint10k(ctx) {
  const tree = await tree10k(ctx);
  const { user, root } = tree;
  // The first one unmeasured, checked: it records every file.
  const first = await takeCheckpoint(user, root);
  await dropCheckpoint(user, first.id);
  if (first.files !== tree.files) throw new Error(`checkpoint of ${root}: ${first.files} files recorded (want ${tree.files})`);
  const floor = await floorSteps(ctx);
  const m = await measuredRounds(ctx, ctx.scale.moveRounds, async () => {
    const meter = cpuMeter(stackPids(ctx));
    const c = await redisTimed(ctx, user, () => takeCheckpoint(user, root));
    const cpu = meter();
    await dropCheckpoint(user, c.id);
    // The floor alternates with the system: the same script on the same tree, then its delete.
    const id = newCheckpointId();
    await floorRound(floor, [() => floorStep(ctx, 'checkpoint', user, { path: root, checkpointId: id })]);
    if (floor.floor) await floorStep(ctx, 'uncheckpoint', user, { checkpointId: id });
    return { ...c, cpu };
  });
  const list = await listBaseline(ctx, tree);
  const vs = overList(m.p50, list);
  return {
    value: m.p50,
    unit: 'ms',
    baseline: list.p50,
    floor: floor.p50(),
    p50: m.p50,
    p99: m.p99,
    cpu: { per: 'checkpoint', system: cpuPerUnit(m.cpu, m.times.length), ...floor.cpu() },
    notes:
      `POST /v1/agent/files/checkpoints of a folder of ${tree.files} files in ${tree.dirs} folders, ${m.times.length} times (each deleted after, not measured): ` +
      `p50 ${fmt(m.p50)} ms, p99 ${fmt(m.p99)} ms, ${cpuPer(m.cpu, m.times.length, 'checkpoint')} (Redis's own not counted: the index works there).${redisNote(m.steps)} Baseline: the recursive listing of the same tree; ${vs.text}.` +
      floor.note('the same checkpoint script sent by one bare process (bench/lib/floor-files.mjs), alternated', 'checkpoint'),
    metrics: { overList: vs.ratio },
  };
}

/** Fisher–Yates: the items in a random order. */
function shuffled(items) {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * `count` changes of the tree, a quarter of each kind, interleaved, `fileSeedConcurrency` at a
 * time: new bytes for existing files, new files beside them, deletions, moves to a new name in
 * the same folder. Every file touched is a different one. → {per, seconds}.
 */
async function changeTree(ctx, tree, round, count) {
  const per = Math.floor(count / 4);
  const dirOf = (d) => `${tree.root}/${tree.unitName(d)}`;
  const files = Array.from({ length: tree.dirs }, (_, d) => tree.names.map((n) => `${dirOf(d)}/${n}`)).flat();
  const touched = shuffled(files).slice(0, 3 * per);
  const [modify, remove, move] = [0, 1, 2].map((k) => touched.slice(k * per, (k + 1) * per));
  const content = distinctContents(64);
  const { user } = tree;
  const put = async (path, i, onConflict) => {
    const body = content(i);
    const res = await upload(ctx.target.url, user.token, { path, size: body.length, content: body, onConflict });
    if (res.status !== 200) throw new Error(`upload ${path}: HTTP ${res.status} ${String(res.text).slice(0, 200)}`);
  };
  const ops = [
    ...modify.map((path, i) => () => put(path, i, 'overwrite')),
    ...Array.from({ length: per }, (_, i) => () => put(`${dirOf(i % tree.dirs)}/new-r${round}-${i}.txt`, per + i, 'error')),
    ...remove.map((path) => async () => expectStatus(await user.call('DELETE', `/v1/agent/files?path=${q(path)}`), 200, `delete ${path}`)),
    ...move.map((path, i) => () => treeOp(user, 'move', path, `${path.slice(0, path.lastIndexOf('/'))}/moved-r${round}-${i}.txt`)),
  ];
  const started = performance.now();
  await pool(shuffled(ops), ctx.scale.fileSeedConcurrency, (op) => op());
  return { per, seconds: (performance.now() - started) / 1000 };
}

export async function rewind10k(ctx) {
  const { scale } = ctx;
  const tree = await tree10k(ctx);
  const { user, root } = tree;
  const changes = [];
  const floor = await floorSteps(ctx);
  const m = await measuredRounds(ctx, scale.rewindRounds, async (round) => {
    const before = await takeCheckpoint(user, root);
    const changed = await changeTree(ctx, tree, round, scale.treeChanges);
    changes.push(changed);
    const meter = cpuMeter(stackPids(ctx));
    const res = await redisTimed(ctx, user, async () => expectStatus(await user.call('POST', '/v1/agent/files/rewind', { path: root, to: before.id }), 200, `rewind ${root}`));
    const cpu = meter();
    // Modified, deleted and moved-away files come back; created and moved-to files go to the trash.
    const { restored, removed, unchanged, checkpointId } = res.body;
    const want = { restored: 3 * changed.per, removed: 2 * changed.per, unchanged: tree.files - 3 * changed.per };
    if (restored !== want.restored || removed !== want.removed || unchanged !== want.unchanged) {
      throw new Error(`rewind of ${4 * changed.per} changes: ${JSON.stringify({ restored, removed, unchanged })} (want ${JSON.stringify(want)})`);
    }
    // The floor makes the same rewind: forward to the changed tree again (the undo checkpoint the
    // system's rewind took; not measured), then back to before: the system's very diff.
    const undo = [newCheckpointId(), newCheckpointId()];
    await floorRound(
      floor,
      [() => floorStep(ctx, 'rewind', user, { path: root, to: before.id, checkpointId: undo[1] })],
      [() => floorStep(ctx, 'rewind', user, { path: root, to: checkpointId, checkpointId: undo[0] })],
    );
    if (floor.floor) for (const id of undo) await floorStep(ctx, 'uncheckpoint', user, { checkpointId: id });
    await dropCheckpoint(user, before.id);
    await dropCheckpoint(user, checkpointId);
    return { ms: res.ms, redisMs: res.redisMs, cpu };
  });
  // The tree is what it was: later scenarios list it.
  const { body } = await getJson(`${ctx.target.url}/v1/agent/files?path=${q(root)}&recursive=true&includeStats=false`, user);
  if (body.entries?.length !== tree.files + tree.dirs) throw new Error(`after the rewinds: ${body.entries?.length} entries (want ${tree.files + tree.dirs})`);
  const list = await listBaseline(ctx, tree);
  const vs = overList(m.p50, list);
  const changeS = median(changes.map((c) => c.seconds));
  return {
    value: m.p50,
    unit: 'ms',
    baseline: list.p50,
    floor: floor.p50(),
    p50: m.p50,
    p99: m.p99,
    cpu: { per: 'rewind', system: cpuPerUnit(m.cpu, m.times.length), ...floor.cpu() },
    notes:
      `POST /v1/agent/files/rewind of a folder of ${tree.files} files in ${tree.dirs} folders to the checkpoint taken before ${4 * changes[0].per} changes ` +
      `(a quarter each: new bytes, new files, deletions, moves; made at ${scale.fileSeedConcurrency} concurrent in ${fmt(changeS)} s, not measured), ${m.times.length} rounds: ` +
      `p50 ${fmt(m.p50)} ms, p99 ${fmt(m.p99)} ms (the checkpoint every rewind takes included), ${cpuPer(m.cpu, m.times.length, 'rewind')} (Redis's own not counted).${redisNote(m.steps)} Baseline: the recursive listing of the same tree; ${vs.text}.` +
      floor.note('the same rewind script sent by one bare process, on the same diff (the tree changed again by a rewind to the undo checkpoint, not measured, then rewound to the same checkpoint; bench/lib/floor-files.mjs)', 'rewind'),
    metrics: { overList: vs.ratio },
  };
}
