// list-page-1000-of-100k: one page of a recursive listing from the middle of 100,000 files,
// against the same page out of 10,000: equal times mean a page costs O(page), not O(tree).
import { cpuPer } from '../lib/cpu.mjs';
import { fileNames, seedTree } from '../lib/seed.mjs';
import { floorListLoop, floorNote, fmt, getJson, measuredLoop, q } from './files-shared.mjs';
import { cpuPerUnit } from '../lib/cpu.mjs';
import { tree10k } from './files-tree.mjs';

const MAX_SECONDS = 30;

/** The big tree: `pageFiles` files at /files/page/cNNN/dN/, one uploaded unit and copies of it. */
async function tree100k(ctx) {
  const { scale } = ctx;
  const user = await ctx.newUser('page');
  const unit = Math.min(scale.seedUnitFiles, scale.pageFiles);
  const perDir = Math.min(100, Math.ceil(unit / 2));
  const units = Math.ceil(scale.pageFiles / unit);
  const root = '/files/page';
  const seed = await seedTree(ctx, user, { root, units, unitName: (u) => `c${String(u).padStart(3, '0')}`, unitFiles: fileNames(unit, perDir) });
  const subdirs = Math.ceil(unit / perDir);
  return { user, root, files: seed.files, dirs: units * (1 + (subdirs > 1 ? subdirs : 0)), seed };
}

const byteOrder = (a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/**
 * Every page of the recursive listing of `root`, in order: the cursor of each, the entry count,
 * and how many neighbours were out of byte order (across pages too).
 */
async function walk(ctx, user, root, limit) {
  const base = `${ctx.target.url}/v1/agent/files?path=${q(root)}&recursive=true&limit=${limit}`;
  const cursors = [];
  // The path each cursor resumes after (the last of the page before it), for the floor.
  const afters = [];
  let entries = 0;
  let disorder = 0;
  let last;
  let cursor;
  for (;;) {
    const { body } = await getJson(cursor ? `${base}&cursor=${q(cursor)}` : base, user);
    const page = body.entries ?? [];
    if (page.length > limit) throw new Error(`GET ?limit=${limit} answered ${page.length} entries: the listing is not paged`);
    for (const e of page) {
      if (last !== undefined && byteOrder(last, e.path) >= 0) disorder++;
      last = e.path;
    }
    entries += page.length;
    if (!body.hasMore) return { base, cursors, afters, entries, disorder };
    if (!body.cursor) throw new Error('a page with hasMore had no cursor');
    cursor = body.cursor;
    cursors.push(cursor);
    afters.push(last);
  }
}

/** The first page and a page from the middle of `tree`, timed; checks the whole listing once. */
async function pages(ctx, tree, label) {
  const { scale } = ctx;
  const walked = await walk(ctx, tree.user, tree.root, scale.pageLimit);
  const want = tree.files + tree.dirs;
  if (walked.entries !== want) ctx.problem('list-page-1000-of-100k', `${label}: the pages held ${walked.entries} entries (want ${want})`);
  if (walked.disorder) ctx.problem('list-page-1000-of-100k', `${label}: ${walked.disorder} entries out of byte order`);
  if (walked.cursors.length === 0) throw new Error(`${label}: one page only; make the tree larger than limit=${scale.pageLimit}`);
  const half = Math.floor(walked.cursors.length / 2);
  const middle = walked.cursors[half];
  const headers = { authorization: `Bearer ${tree.user.token}` };
  const opts = { seconds: scale.latencyS, minSamples: Math.min(scale.latencyMinSamples, 20), maxSeconds: MAX_SECONDS };
  const mid = await measuredLoop(ctx, `${walked.base}&cursor=${q(middle)}`, headers, opts);
  const first = await measuredLoop(ctx, walked.base, headers, opts);
  const floor = await floorListLoop(ctx, tree.user, { path: tree.root, recursive: true, limit: scale.pageLimit, after: walked.afters[half] }, opts);
  return { pages: walked.cursors.length + 1, entries: walked.entries, mid, first, floor };
}

const loopNote = (r) => `p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms over ${r.samples}`;

export async function listPage(ctx) {
  const { scale } = ctx;
  const small = await tree10k(ctx);
  const big = await tree100k(ctx);
  const b = await pages(ctx, big, `${big.files} files`);
  const s = await pages(ctx, small, `${small.files} files`);
  return {
    value: b.mid.p50,
    unit: 'ms',
    baseline: s.mid.p50,
    floor: b.floor?.p50 ?? null,
    p50: b.mid.p50,
    p99: b.mid.p99,
    cpu: { per: 'request', system: cpuPerUnit(b.mid.cpu, b.mid.samples), ...(b.floor && { floor: cpuPerUnit(b.floor.cpu, b.floor.samples) }) },
    notes:
      `GET /v1/agent/files?recursive=true&limit=${scale.pageLimit}&cursor=… of ${big.files} files in ${big.dirs} folders (seeded: ${big.seed.how}), ` +
      `walked once: ${b.entries} entries in ${b.pages} pages. A page from the middle: ${loopNote(b.mid)}; ${cpuPer(b.mid.cpu, b.mid.samples, 'request')}; the first page: ${loopNote(b.first)}. ` +
      `Baseline: the page from the middle of ${small.files} files (${s.entries} entries in ${s.pages} pages): ${loopNote(s.mid)}; its first page: ${loopNote(s.first)} ` +
      '(ratio ≈ 1: a page costs O(page)).' +
      floorNote('the same page from the middle (one ZRANGEBYLEX with LIMIT from the path it resumes after, the same JSON entries) from one bare process (bench/lib/floor-files.mjs)', b.floor, b.floor?.samples, 'request'),
  };
}
