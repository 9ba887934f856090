// noisy-neighbour: while one user runs, in turn, the worst search the API accepts over 1 MiB
// files, a move of a tree at MAX_TREE_ENTRIES, and MCP sessions that never read their streams
// while their changes happen, another user's files/read and GET /v1/agents/{id} (one request
// after another, the two taking turns). Value: that user's worst p99 under a noise; baseline: the
// same requests with nothing else running, measured in turns with the noises (inTurns). Metrics:
// the worst p99 ÷ quiet p99 of each request, the 5xx answers, the longest Redis step (SLOWLOG) and
// the gateway's RSS. Floor: what one core kept busy costs another request on this machine,
// whatever the code: the GET of the agent-get floor (with its I/O) while a bare process matches
// the same pattern over the same text, one CPU's worth, as the search noise's worker does.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { request as httpRequestRaw } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { MiB } from '../lib/config.mjs';
import { expectStatus, httpRequest, inTurns, quantile } from '../lib/http.mjs';
import { over } from '../lib/report.mjs';
import { fmt, q, rss } from './files-shared.mjs';
import { startFloorServer } from '../lib/floor-server.mjs';

/** The costliest pattern the API accepts over a long line (1,003 RE2 instructions, the cap is 1,100), and a text it must search hard. */
const WORST_Q = '[^\\n]{0,500}z';
const hardText = (bytes) => `${'a'.repeat(999)}z`.repeat(Math.ceil(bytes / 1000)).slice(0, bytes);
const MCP_ACCEPT = 'application/json, text/event-stream';
/** The MCP noise's pace of changes: one every this many ms. */
const MCP_CHANGE_MS = 20;

/** The bystander's two requests, one after another, for `seconds`: each's latencies and the statuses seen. */
async function bystander(target, seconds) {
  const samples = { read: [], agent: [] };
  const statuses = {};
  const started = performance.now();
  for (let i = 0; (performance.now() - started) / 1000 < seconds || i < 4; i++) {
    const kind = i % 2 ? 'agent' : 'read';
    const res = await httpRequest(target[kind], { headers: target.headers, sink: 'count' });
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    samples[kind].push(res.ms);
  }
  return { samples, statuses };
}

/** Runs `noise` (a loop that goes on until `stop.stopped`) beside the bystander; → the bystander's run and what the noise says. */
async function withNoise(target, seconds, noise) {
  const stop = { stopped: false };
  const running = noise ? noise(stop) : Promise.resolve(undefined);
  try {
    return { ...(await bystander(target, seconds)), noise: await ((stop.stopped = true), running) };
  } finally {
    stop.stopped = true;
  }
}

/** Counts the answers of a loop of requests: status → n. */
function counter() {
  const counts = {};
  return { counts, add: (status) => (counts[status] = (counts[status] ?? 0) + 1) };
}

/** Two searches at a time (MAX_SEARCHES_PER_USER's default) of the worst pattern over the noisy user's large files, again and again. */
function searchNoise(ctx, user) {
  const url = `${ctx.target.url}/v1/agent/files/search?q=${q(WORST_Q)}&regex=true&limit=1000&path=${q('/files/noisy-search')}`;
  return async (stop) => {
    const { counts, add } = counter();
    const loop = async () => {
      while (!stop.stopped) add((await httpRequest(url, { headers: { authorization: `Bearer ${user.token}` } })).status);
    };
    await Promise.all([loop(), loop()]);
    return { answers: counts };
  };
}

/** The noisy user's tree of about `entries` entries, made by copying it into itself until it is that large. */
async function seedTree(user, entries) {
  expectStatus(await user.call('POST', '/v1/agent/files/directories', { path: '/files/noisy-tree/a' }), [200, 201], 'create a folder');
  await uploadText(user, '/files/noisy-tree/a/f.txt', 'x');
  let size = 2; // the folder's file, and the folder `a` itself as it is copied
  for (let level = 0; size * 2 <= entries; level++) {
    expectStatus(await user.call('POST', '/v1/agent/files/copy', { from: '/files/noisy-tree/a', to: '/files/noisy-tree/c' }), 200, 'copy the tree');
    expectStatus(await user.call('POST', '/v1/agent/files/move', { from: '/files/noisy-tree/c', to: `/files/noisy-tree/a/${level}` }), 200, 'move the copy into the tree');
    size *= 2;
  }
  return size - 1;
}

/** Moves of the whole tree back and forth, one after another, with the longest Redis step among them. */
function treeNoise(ctx, user) {
  // Where the tree is, across the rounds.
  let [from, to] = ['/files/noisy-tree/a', '/files/noisy-tree/b'];
  return async (stop) => {
    const { counts, add } = counter();
    let longestMs = 0;
    const slowlog = await ctx.slowlog();
    while (!stop.stopped) {
      const step = () => user.call('POST', '/v1/agent/files/move', { from, to });
      const { out, longestMs: ms } = slowlog ? await slowlog.step(user.sub, step) : { out: await step(), longestMs: 0 };
      add(out.status);
      longestMs = Math.max(longestMs, ms ?? 0);
      if (out.status === 200) [from, to] = [to, from];
    }
    return { answers: counts, longestRedisStepMs: slowlog ? longestMs : null };
  };
}

async function uploadText(user, path, text) {
  const boundary = `----noisy${Math.random().toString(16).slice(2)}`;
  const body = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="path"\r\n\r\n${path}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f"\r\nContent-Type: text/plain\r\n\r\n${text}\r\n--${boundary}--\r\n`);
  const res = await httpRequest(`${user.baseUrl}/v1/agent/files/upload?onConflict=overwrite`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(body.length) },
    body,
  });
  if (res.status !== 200 && res.status !== 201) throw new Error(`upload ${path}: HTTP ${res.status} ${res.text?.slice(0, 200)}`);
}

/** One JSON-RPC message to the MCP endpoint; → the answer and the session id. */
async function mcpPost(ctx, user, message, sessionId) {
  const res = await httpRequest(`${ctx.target.url}/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json', accept: MCP_ACCEPT, 'mcp-protocol-version': '2025-06-18', ...(sessionId && { 'mcp-session-id': sessionId }) },
    body: JSON.stringify(message),
  });
  if (res.status >= 300) throw new Error(`MCP ${message.method}: HTTP ${res.status} ${res.text?.slice(0, 200)}`);
  return { sessionId: sessionId ?? res.headers['mcp-session-id'] };
}

/** An MCP session subscribed to `uri` whose GET stream is opened and never read: → close(). */
async function silentSession(ctx, user, uri) {
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'noisy', version: '1' } } };
  const { sessionId } = await mcpPost(ctx, user, init);
  await mcpPost(ctx, user, { jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId);
  await mcpPost(ctx, user, { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri } }, sessionId);
  const req = httpRequestRaw(`${ctx.target.url}/v1/mcp`, { headers: { authorization: `Bearer ${user.token}`, accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' } });
  req.on('response', (res) => res.pause()); // never read: the socket fills, and the gateway must not buffer without bound
  req.on('error', () => undefined);
  req.end();
  return { close: () => req.destroy() };
}

/** `sessions` MCP sessions that never read while the noisy user changes files below their subscription; the gateway's peak RSS meanwhile. */
function mcpNoise(ctx, user, sessions) {
  const pid = ctx.target.pids?.gateway;
  return async (stop) => {
    const { counts, add } = counter();
    const before = pid ? rss(pid) : undefined;
    let peak = before ?? 0;
    const sampler = pid ? setInterval(() => (peak = Math.max(peak, rss(pid))), 50) : undefined;
    const open = await Promise.all(Array.from({ length: sessions }, () => silentSession(ctx, user, 'workspace:///files/noisy-mcp')));
    let changes = 0;
    try {
      // Changes at a steady pace (the streams' load, not the uploads', is what this noise is about).
      for (let next = performance.now(); !stop.stopped; next += MCP_CHANGE_MS) {
        await uploadText(user, `/files/noisy-mcp/f${changes % 50}.txt`, `change ${changes}`);
        add(200);
        changes++;
        await sleep(Math.max(0, next + MCP_CHANGE_MS - performance.now()));
      }
    } finally {
      for (const s of open) s.close();
      clearInterval(sampler);
    }
    return { answers: counts, changes, rssBeforeMiB: before === undefined ? null : before / MiB, rssPeakMiB: pid ? peak / MiB : null };
  };
}

/** A bare process matching `pattern` over `bytes` of hard text again and again (one core busy) until killed. */
async function busyCore(bytes) {
  const script = `import { RE2JS } from 're2js';
const re = RE2JS.compile(${JSON.stringify(WORST_Q)}, RE2JS.MULTILINE);
const text = ${JSON.stringify('a'.repeat(999))}.concat('z').repeat(${Math.ceil(bytes / 1000)});
process.send('ready');
for (;;) { const m = re.matcher(text); for (let i = 0, from = 0; i < 100 && m.find(from); i++) from = m.end(); }`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], cwd: new URL('../..', import.meta.url) });
  await once(child, 'message');
  return { stop: async () => (child.kill('SIGKILL'), await once(child, 'exit').catch(() => undefined)) };
}

/** The floor: the agent-get floor's GET, one after another, quiet and beside a busy core, in turns: → their p99s. */
async function floorUnderBusyCore(ctx, agent, seconds, rounds) {
  if (!ctx.target.redisUrl) return undefined;
  const floor = await startFloorServer(agent, { redisUrl: ctx.target.redisUrl, agents: [{ agentId: agent.agentId, configId: agent.currentConfigId }], env: ctx.target.floorEnv });
  try {
    const url = `${floor.url}/v1/agents/${agent.agentId}`;
    const loop = async () => {
      const samples = [];
      for (const started = performance.now(); (performance.now() - started) / 1000 < seconds || samples.length < 4; ) samples.push((await httpRequest(url, { sink: 'count' })).ms);
      return samples;
    };
    await loop();
    const runs = await inTurns(['quiet', 'busy'], rounds, async (name) => {
      if (name === 'quiet') return loop();
      const busy = await busyCore(ctx.scale.noisySearchFileBytes);
      try {
        return await loop();
      } finally {
        await busy.stop();
      }
    });
    return { quiet: quantile(runs.quiet.flat(), 0.99), busy: quantile(runs.busy.flat(), 0.99) };
  } finally {
    await floor.stop();
  }
}

export async function noisyNeighbour(ctx) {
  const { scale } = ctx;
  const other = await ctx.newUser('noisy-bystander');
  const noisy = await ctx.newUser('noisy');
  for (const user of [other, noisy]) user.baseUrl = ctx.target.url;
  await uploadText(other, '/files/mine.txt', 'the bystander reads this');
  const agent = expectStatus(await other.call('POST', '/v1/agents', { name: 'Bystander' }), 201, 'create an Agent');
  const target = { read: `${ctx.target.url}/v1/agent/files/read?path=${q('/files/mine.txt')}`, agent: `${ctx.target.url}/v1/agents/${agent.body.agentId}`, headers: { authorization: `Bearer ${other.token}` } };

  for (let i = 0; i < scale.noisySearchFiles; i++) await uploadText(noisy, `/files/noisy-search/${i}.txt`, hardText(scale.noisySearchFileBytes));
  const treeEntries = await seedTree(noisy, scale.noisyTreeEntries);
  const noises = { quiet: undefined, search: searchNoise(ctx, noisy), tree: treeNoise(ctx, noisy), mcp: mcpNoise(ctx, noisy, scale.noisyMcpSessions) };
  await bystander(target, 1); // warm
  const runs = await inTurns(Object.keys(noises), scale.noisyRounds, (name) => withNoise(target, scale.noisySeconds, noises[name]));

  const floor = await floorUnderBusyCore(ctx, agent.body, scale.noisySeconds, scale.noisyRounds);
  const p99Of = (name, kind) => quantile(runs[name].flatMap((r) => r.samples[kind]), 0.99);
  const noisyKinds = ['search', 'tree', 'mcp'];
  const worst = (kind) => Math.max(...noisyKinds.map((n) => p99Of(n, kind)));
  const fivexx = Object.values(runs).flat().reduce((n, r) => n + Object.entries(r.statuses).filter(([s]) => Number(s) >= 500).reduce((m, [, c]) => m + c, 0), 0);
  const noiseFivexx = Object.values(runs).flat().reduce((n, r) => n + Object.entries(r.noise?.answers ?? {}).filter(([s]) => Number(s) >= 500).reduce((m, [, c]) => m + c, 0), 0);
  if (fivexx) ctx.problem('noisy-neighbour', `the bystander got ${fivexx} answers ≥ 500`);
  if (noiseFivexx) ctx.problem('noisy-neighbour', `the noisy user got ${noiseFivexx} answers ≥ 500`);
  const noiseOf = (name) => runs[name].map((r) => r.noise);
  const longestRedisStepMs = Math.max(...noiseOf('tree').map((n) => n.longestRedisStepMs ?? 0));
  const rssPeak = Math.max(...noiseOf('mcp').map((n) => n.rssPeakMiB ?? 0));
  const rssBefore = Math.min(...noiseOf('mcp').map((n) => n.rssBeforeMiB ?? Infinity));
  const answers = (name) => JSON.stringify(noiseOf(name).reduce((all, n) => {
    for (const [s, c] of Object.entries(n.answers)) all[s] = (all[s] ?? 0) + c;
    return all;
  }, {}));
  const quietP99 = Math.max(p99Of('quiet', 'read'), p99Of('quiet', 'agent'));
  const value = Math.max(worst('read'), worst('agent'));
  const line = (name) => `${name}: files/read p99 ${fmt(p99Of(name, 'read'))} ms, GET Agent p99 ${fmt(p99Of(name, 'agent'))} ms`;
  return {
    value,
    unit: 'ms',
    baseline: quietP99,
    floor: floor?.busy ?? null,
    p50: quantile(noisyKinds.flatMap((n) => runs[n].flatMap((r) => [...r.samples.read, ...r.samples.agent])), 0.5),
    p99: value,
    metrics: {
      ...Object.fromEntries(noisyKinds.map((n) => [`${n}P99OverQuiet`, Math.max(over(p99Of(n, 'read'), p99Of('quiet', 'read')) ?? 0, over(p99Of(n, 'agent'), p99Of('quiet', 'agent')) ?? 0)])),
      fivexx: fivexx + noiseFivexx,
      longestRedisStepMs: ctx.target.redisUrl ? longestRedisStepMs : undefined,
      gatewayRssPeakMiB: rssPeak || undefined,
    },
    notes:
      `Another user's files/read and GET /v1/agents/{id}, one request after another, for ${scale.noisySeconds} s beside each noise, ${scale.noisyRounds} rounds in turns: ` +
      `${['quiet', ...noisyKinds].map(line).join('; ')}. ` +
      `Noises: search = two at a time of q=${WORST_Q} (regex) over ${scale.noisySearchFiles} files of ${fmt(scale.noisySearchFileBytes / MiB, 2)} MiB (answers ${answers('search')}); ` +
      `tree = moves of a tree of ${treeEntries} entries back and forth (answers ${answers('tree')}; longest Redis step ${fmt(longestRedisStepMs)} ms); ` +
      `mcp = ${scale.noisyMcpSessions} MCP sessions subscribed below a folder whose GET streams are never read while the noisy user writes into it ` +
      `(${noiseOf('mcp').reduce((n, m) => n + m.changes, 0)} changes; gateway RSS ${fmt(rssBefore)} MiB before, peak ${fmt(rssPeak)} MiB). 5xx answers: ${fivexx + noiseFivexx}. ` +
      (floor
        ? `Floor: the agent-get floor's GET (with its I/O) beside a bare process matching the same pattern over the same text (one core busy): p99 ${fmt(floor.busy)} ms, against ${fmt(floor.quiet)} ms quiet, in turns (${fmt(floor.busy / floor.quiet, 2)} ×).`
        : 'No floor: the target has no Redis settings.'),
  };
}
