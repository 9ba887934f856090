// Summarizes .cpuprofile files (from BENCH_CPU_PROF): where the samples fall, by layer of a
// request's path, by package (or Node internals, GC, idle) and by function. Usage: node bench/profile-summary.mjs <file…> [--top N]
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args[topAt + 1]) : 25;
const files = args.filter((a, i) => a !== '--top' && !(topAt >= 0 && i === topAt + 1));

/** The package (node_modules/<name>), workspace dir, or Node part a script URL belongs to. */
function area(url, name) {
  if (!url) return name.startsWith('(') ? name : `(native) ${name}`;
  const nm = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (nm) return nm[1];
  const ws = url.match(/\/(services|packages)\/([^/]+)\//);
  if (ws) return `${ws[1]}/${ws[2]}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0] === 'internal' ? url.slice(5).split('/').slice(0, 2).join('/') : url.slice(5)}`;
  return url;
}

/**
 * Layers of a request's path through a service, by what a stack frame's function and script
 * name: a sample counts for the first layer met walking from the leaf up, so the time a library
 * spends for a layer (a syscall writing a response, the GC) counts where it was asked for.
 */
const LAYERS = [
  ['garbage collector', /^\(garbage/],
  ['logging (pino)', /pino|sonic-boom/],
  ['metrics (prom-client)', /prom-client/],
  ['compression', /compression\/|on-headers|compress\.js/],
  ['rate limit', /rate-limit|rate-limiter-flexible/],
  ['Redis client', /ioredis|redis-parser|denque/],
  ['gRPC (grpc-js, protobuf)', /@grpc\/grpc-js|bufbuild|\/dist\/gen\/|http2/],
  ['authentication', /auth\.js|jose|jwks/],
  ['JSON rendering', /\.json\.js|stringify|json express\/lib\/response/],
  ['route handlers, validation', /\.routes?\.js|\.handlers\.js|validate/],
  ['Express routing', /router\/|path-to-regexp|express\/lib/],
  ['HTTP and sockets', /_http_|node:net|stream_base|writev|writeUtf8|writeString|streams/],
  ['packages/platform', /packages\/platform/],
  ['other service code', /\/dist\//],
];

/** Busy samples (not idle, not startup) by layer: {busy, layers: Map}. */
function byLayer(profile, counts, byId, parent) {
  const layers = new Map();
  let busy = 0;
  for (const [id, n] of counts) {
    const frames = [];
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) frames.push(`${byId.get(cur).callFrame.functionName} ${byId.get(cur).callFrame.url}`);
    if (/^\((idle|program|root)\)/.test(frames[0]) || frames.some((f) => /node:internal\/modules|Module\._compile/.test(f))) continue;
    busy += n;
    const layer = frames.map((f) => LAYERS.find(([, re]) => re.test(f))?.[0]).find(Boolean) ?? 'unattributed';
    layers.set(layer, (layers.get(layer) ?? 0) + n);
  }
  return { busy, layers };
}

for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const counts = new Map();
  for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
  const total = profile.samples.length;
  const areas = new Map();
  const fns = new Map();
  for (const [id, n] of counts) {
    const node = byId.get(id);
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || '(anonymous)';
    const a = area(url, name);
    areas.set(a, (areas.get(a) ?? 0) + n);
    const key = `${name} ${url ? `${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/(services|packages)\//, '$1/')}:${lineNumber + 1}` : ''}`;
    fns.set(key, (fns.get(key) ?? 0) + n);
  }
  // Inclusive: a sample counts for every area and function on its stack (once each).
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const incAreas = new Map();
  const incFns = new Map();
  for (const [id, n] of counts) {
    const seenA = new Set();
    const seenF = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const { functionName, url, lineNumber } = byId.get(cur).callFrame;
      const name = functionName || '(anonymous)';
      if (name === '(root)') continue;
      seenA.add(area(url, name));
      seenF.add(`${name} ${url ? `${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/(services|packages)\//, '$1/')}:${lineNumber + 1}` : ''}`);
    }
    for (const a of seenA) incAreas.set(a, (incAreas.get(a) ?? 0) + n);
    for (const f of seenF) incFns.set(f, (incFns.get(f) ?? 0) + n);
  }
  const idle = areas.get('(idle)') ?? 0;
  const ms = (profile.endTime - profile.startTime) / 1000;
  const pct = (n) => `${((100 * n) / total).toFixed(1).padStart(5)}%`;
  console.log(`\n## ${basename(file)}: ${total} samples over ${(ms / 1000).toFixed(1)} s, busy ${pct(total - idle)}`);
  const { busy, layers } = byLayer(profile, counts, byId, parent);
  console.log(`\nby layer (share of the ${busy} busy samples after startup):`);
  for (const [l, n] of [...layers].sort((x, y) => y[1] - x[1])) console.log(`  ${((100 * n) / busy).toFixed(1).padStart(5)}%  ${l}`);
  console.log('\nby area (self):');
  for (const [a, n] of [...areas].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`  ${pct(n)}  ${a}`);
  console.log('\nby area (inclusive):');
  for (const [a, n] of [...incAreas].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`  ${pct(n)}  ${a}`);
  console.log('\nby function (inclusive):');
  for (const [f, n] of [...incFns].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`  ${pct(n)}  ${f}`);
  console.log('\nby function (self):');
  for (const [f, n] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`  ${pct(n)}  ${f}`);
}
