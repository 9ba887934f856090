// The workspace over MCP (/v1/mcp, the official SDK's client): mcp-read (read_text_file of one
// small file from many sessions at once, against the HTTP download of the same file) and
// mcp-edit (edit_file, against what a client without MCP does: download, change, upload).
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { cpuMeter, cpuPer, cpuPerUnit } from '../lib/cpu.mjs';
import { httpRequest, median, quantile, upload } from '../lib/http.mjs';
import { addCpu, fmt, q, sizeLabel, stackPids } from './files-shared.mjs';
import { startFilesFloor } from '../lib/floor-files.mjs';

const sha256 = (text) => createHash('sha256').update(text, 'utf8').digest('hex');

/** mcp-read alternates its kinds of load in this many rounds, so drift on a shared machine hits each alike. */
const READ_ROUNDS = 2;
/** mcp-edit's sequential loop stops here even short of its minimum of samples. */
const EDIT_MAX_SECONDS = 60;

/** The line every edit rewrites, at a fixed width so the file keeps its size. */
const counterLine = (n) => `counter: ${String(n).padStart(6, '0')}`;

const templates = new Map();

/**
 * A text file of exactly `bytes` ASCII bytes (at least 64) holding `counterLine(n)` once,
 * in the middle of source-like lines.
 */
function textFile(bytes, n) {
  let template = templates.get(bytes);
  if (!template) {
    const lines = [];
    for (let i = 0; lines.join('\n').length < bytes; i++) lines.push(`// line ${String(i).padStart(4, '0')}: the quick brown fox jumps over the lazy dog`);
    const half = Math.floor(lines.length / 2);
    const all = `${[...lines.slice(0, half), counterLine(0), ...lines.slice(half)].join('\n').slice(0, bytes - 1)}\n`;
    const at = all.indexOf(counterLine(0));
    template = [all.slice(0, at), all.slice(at + counterLine(0).length)];
    templates.set(bytes, template);
  }
  return template[0] + counterLine(n) + template[1];
}

/** An MCP session of `user` through the SDK's Streamable HTTP client: initialize, then calls. */
async function openSession(ctx, user) {
  const transport = new StreamableHTTPClientTransport(new URL(`${ctx.target.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${user.token}` } } });
  const client = new Client({ name: 'bench', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return {
    /** The tool's structuredContent; a tool error throws. */
    async call(name, args) {
      const result = await client.callTool({ name, arguments: args });
      if (result.isError) throw new Error(`${name} ${JSON.stringify(args).slice(0, 100)}: ${JSON.stringify(result.structuredContent ?? result.content).slice(0, 300)}`);
      return result.structuredContent;
    },
    /** Ends the session on the server (DELETE), then the client. */
    async close() {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}

/**
 * An MCP session held by a protocol client of the weight of the bench's HTTP client: JSON-RPC
 * POSTs over the same keep-alive agent (initialize, notifications/initialized, then tools/call),
 * each answer parsed as the transport's JSON or SSE body. It measures the server: on a machine
 * of two cores the SDK client's own CPU per call (its web streams, schema checks) would weigh
 * on one side of the ratio only.
 */
async function openLeanSession(ctx, user) {
  const url = `${ctx.target.url}/v1/mcp`;
  const base = { authorization: `Bearer ${user.token}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
  let sessionId;
  let protocolVersion;
  let nextId = 1;
  const post = async (message) => {
    const headers = { ...base, ...(sessionId && { 'mcp-session-id': sessionId }), ...(protocolVersion && { 'mcp-protocol-version': protocolVersion }) };
    const res = await httpRequest(url, { method: 'POST', headers, body: JSON.stringify(message) });
    if (res.status !== 200 && res.status !== 202) throw new Error(`MCP ${message.method}: HTTP ${res.status} ${String(res.text).slice(0, 200)}`);
    sessionId ??= res.headers['mcp-session-id'];
    if (res.status === 202) return undefined;
    const json = String(res.headers['content-type']).startsWith('text/event-stream') ? res.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).at(-1) : res.text;
    const answer = JSON.parse(json);
    if (answer.error) throw new Error(`MCP ${message.method}: ${JSON.stringify(answer.error)}`);
    return answer.result;
  };
  const init = await post({ jsonrpc: '2.0', id: nextId++, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench-lean', version: '1.0.0' } } });
  protocolVersion = init.protocolVersion;
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return {
    async call(name, args) {
      const result = await post({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } });
      if (result.isError) throw new Error(`${name} ${JSON.stringify(args).slice(0, 100)}: ${JSON.stringify(result.structuredContent ?? result.content).slice(0, 300)}`);
      return result.structuredContent;
    },
    async close() {
      await httpRequest(url, { method: 'DELETE', headers: { authorization: base.authorization, 'mcp-session-id': sessionId } }).catch(() => undefined);
    },
  };
}

async function openSessions(ctx, user, n, open = openSession) {
  const sessions = [];
  try {
    for (let i = 0; i < n; i++) sessions.push(await open(ctx, user));
  } catch (err) {
    await closeSessions(sessions);
    throw err;
  }
  return sessions;
}

const closeSessions = (sessions) => Promise.all(sessions.map((s) => s.close().catch(() => undefined)));

/**
 * `workers` loops, each running `step(worker)` (resolving with its ms) one call after another
 * until `seconds` passed (at least once each): {calls, seconds, latencies, cpu} (cpu: the CPU ms
 * of `pids`, the stack's unless given, and the bench's meanwhile).
 */
async function closedLoop(ctx, { workers, seconds, pids = stackPids(ctx) }, step) {
  const latencies = [];
  const meter = cpuMeter(pids);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      do latencies.push(await step(w));
      while (performance.now() < deadline);
    }),
  );
  return { calls: latencies.length, seconds: (performance.now() - started) / 1000, latencies, cpu: meter() };
}

/** Several closedLoop results of one kind as one. */
function merged(runs) {
  const latencies = runs.flatMap((r) => r.latencies);
  const seconds = runs.reduce((s, r) => s + r.seconds, 0);
  const cpu = runs.reduce((total, r) => addCpu(total, r.cpu), {});
  return { calls: latencies.length, seconds, rate: latencies.length / seconds, p50: median(latencies), p99: quantile(latencies, 0.99), cpu };
}

const timed = async (fn) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

/** GET of `route` (download or read) for `path`, as `user`; throws unless 200. */
async function httpGet(ctx, user, route, path) {
  const res = await httpRequest(`${ctx.target.url}/v1/agent/files/${route}?path=${q(path)}`, { headers: { authorization: `Bearer ${user.token}` } });
  if (res.status !== 200) throw new Error(`GET ${route} ${path}: HTTP ${res.status} ${String(res.text).slice(0, 200)}`);
  return res;
}

/** Uploads `text` to `path` (overwriting); throws unless 200 with those bytes. */
async function put(ctx, user, path, text, ifMatch) {
  const body = Buffer.from(text, 'utf8');
  const res = await upload(ctx.target.url, user.token, { path, size: body.length, content: body, ifMatch });
  if (res.status !== 200) throw new Error(`upload ${path}: HTTP ${res.status} ${String(res.text).slice(0, 200)}`);
  if (res.body?.sha256 !== sha256(text)) throw new Error(`upload ${path}: stored sha256 ${res.body?.sha256}, sent ${sha256(text)}`);
  return res;
}

/**
 * A tools/call of `name` on the files floor (lib/floor-files.mjs: the tool's Redis and S3 calls
 * from one bare process) as `user`, timed: {ms, out}; throws on a tool error.
 */
async function floorTool(floor, user, name, args) {
  let out;
  const ms = await timed(async () => {
    const res = await httpRequest(`${floor.url}/mcp/${encodeURIComponent(user.sub)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });
    const { result } = JSON.parse(res.text);
    if (res.status !== 200 || result.isError) throw new Error(`floor ${name}: HTTP ${res.status} ${String(res.text).slice(0, 200)}`);
    out = result.structuredContent;
  });
  return { ms, out };
}

const loadNote = (r) => `${fmt(r.rate, 0)}/s, p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms over ${r.calls}`;

export async function mcpRead(ctx) {
  const { scale } = ctx;
  const user = await ctx.newUser('mcp-read');
  const path = '/files/mcp/read.txt';
  const text = textFile(scale.mcpFileBytes, 0);
  const size = Buffer.byteLength(text);
  await put(ctx, user, path, text);
  const sessions = await openSessions(ctx, user, scale.mcpSessions, openLeanSession);
  const sdkSessions = await openSessions(ctx, user, scale.mcpSessions).catch(async (err) => {
    await closeSessions(sessions);
    throw err;
  });
  const readTool = (session) =>
    timed(async () => {
      const out = await session.call('read_text_file', { path });
      if (out?.content !== text || out.sha256 !== sha256(text)) throw new Error(`read_text_file ${path}: not the content written`);
    });
  const floor = await startFilesFloor(ctx);
  const floorPids = floor && { floor: floor.pid, ...(ctx.target.s3Pid && { s3: ctx.target.s3Pid }) };
  try {
    const kinds = {
      // The baseline: the JSON read route, the same files-service read as read_text_file without MCP.
      read: async () =>
        timed(async () => {
          const res = await httpGet(ctx, user, 'read', path);
          if (JSON.parse(res.text).content !== text) throw new Error(`GET read ${path}: not the content written`);
        }),
      // Beside it: the file's bytes by the download route (ETag, presigned GET of the store).
      download: async () =>
        timed(async () => {
          const res = await httpGet(ctx, user, 'download', path);
          if (res.text !== text) throw new Error(`GET download ${path}: ${res.bytes} bytes, not the ${size} written`);
        }),
      mcp: async (w) => readTool(sessions[w]),
      sdk: async (w) => readTool(sdkSessions[w]),
      // The floor: the tool's Redis and S3 calls from one bare process.
      ...(floor && {
        floor: async () => {
          const { ms, out } = await floorTool(floor, user, 'read_text_file', { path });
          if (out?.content !== text) throw new Error(`floor read_text_file ${path}: not the content written`);
          return ms;
        },
      }),
    };
    const load = { workers: scale.mcpSessions };
    const loadOf = (kind) => ({ ...load, ...(kind === 'floor' && { pids: floorPids }) });
    // Unmeasured warm-up of each path (connections, JIT, the sessions' first calls).
    for (const [kind, step] of Object.entries(kinds)) await closedLoop(ctx, { ...loadOf(kind), seconds: Math.max(scale.warmupS, kind === 'floor' ? 1 : 0) }, step);
    const runs = { read: [], download: [], mcp: [], sdk: [], floor: [] };
    for (let round = 0; round < READ_ROUNDS; round++) {
      for (const [kind, step] of Object.entries(kinds)) runs[kind].push(await closedLoop(ctx, { ...loadOf(kind), seconds: scale.durationS / READ_ROUNDS }, step));
    }
    const [read, download, mcp, sdk] = [merged(runs.read), merged(runs.download), merged(runs.mcp), merged(runs.sdk)];
    const floorLoad = floor ? merged(runs.floor) : undefined;
    return {
      value: mcp.rate,
      unit: 'reads/s',
      baseline: read.rate,
      floor: floorLoad?.rate ?? null,
      p50: mcp.p50,
      p99: mcp.p99,
      cpu: {
        per: 'call',
        system: cpuPerUnit(mcp.cpu, mcp.calls),
        baseline: cpuPerUnit(read.cpu, read.calls),
        download: cpuPerUnit(download.cpu, download.calls),
        sdkClient: cpuPerUnit(sdk.cpu, sdk.calls),
        ...(floorLoad && { floor: cpuPerUnit(floorLoad.cpu, floorLoad.calls) }),
      },
      metrics: { overDownload: mcp.rate / download.rate, sdkClientOverReadRoute: sdk.rate / read.rate },
      notes:
        `read_text_file of one ${sizeLabel(size)} text file from ${scale.mcpSessions} MCP sessions (a JSON-RPC client on the bench's HTTP agent, one call in flight each) for ${scale.durationS} s in ${READ_ROUNDS} rounds ` +
        `alternating with the HTTP reads, after ${scale.warmupS} s of warm-up of each; every answer checked: ${loadNote(mcp)}; ${cpuPer(mcp.cpu, mcp.calls, 'call')}. ` +
        `Baseline: GET /v1/agent/files/read (JSON) of the same file at ${scale.mcpSessions} concurrent: ${loadNote(read)}; ${cpuPer(read.cpu, read.calls, 'GET')}. ` +
        `GET /v1/agent/files/download of it: ${loadNote(download)}; ${cpuPer(download.cpu, download.calls, 'GET')}; MCP ÷ download ${fmt(mcp.rate / download.rate, 2)}. ` +
        `The same tool from the official SDK's client: ${loadNote(sdk)}; ${cpuPer(sdk.cpu, sdk.calls, 'call')}; ÷ read route ${fmt(sdk.rate / read.rate, 2)} (its client's own CPU counts against it on this machine). ` +
        (floorLoad
          ? `Floor: the same tools/call answered by one bare process with the tool's Redis and S3 calls (one HGET of the index, one S3 GET; bench/lib/floor-files.mjs), alternated: ${loadNote(floorLoad)}; ${cpuPer(floorLoad.cpu, floorLoad.calls, 'call')}`
          : "No floor: the bench cannot reach the stack's Redis"),
    };
  } finally {
    await closeSessions([...sessions, ...sdkSessions]);
  }
}

/**
 * One file edited again and again, each time by one exact-match edit of its counter line:
 * `step()` edits it (by MCP or by HTTP) and checks the answer; `expected` is what it must hold.
 */
function editedFile(path, bytes) {
  let n = 0;
  return {
    path,
    initial: textFile(bytes, 0),
    get expected() {
      return textFile(bytes, n);
    },
    /** The edit that moves the counter on, and the content it leaves. */
    next() {
      const edit = { oldText: counterLine(n), newText: counterLine(n + 1) };
      return { edit, after: textFile(bytes, n + 1), done: () => n++ };
    },
  };
}

/** edit_file of `file` in `session`: the answer must carry the sha256 of the expected bytes. */
async function mcpEditStep(session, file) {
  const { edit, after, done } = file.next();
  const ms = await timed(async () => {
    const out = await session.call('edit_file', { path: file.path, edits: [edit] });
    if (out?.sha256 !== sha256(after)) throw new Error(`edit_file ${file.path}: answered sha256 ${out?.sha256}, want ${sha256(after)}`);
  });
  done();
  return ms;
}

/** What a client without MCP does: download the file, change it, upload it whole onto the bytes it read (If-Match). */
async function httpEditStep(ctx, user, file) {
  const { edit, after, done } = file.next();
  const ms = await timed(async () => {
    const got = await httpGet(ctx, user, 'download', file.path);
    if (got.text !== file.expected) throw new Error(`GET download ${file.path}: not the content last written`);
    const at = got.text.indexOf(edit.oldText);
    const edited = got.text.slice(0, at) + edit.newText + got.text.slice(at + edit.oldText.length);
    if (edited !== after) throw new Error(`${file.path}: the edit did not give the expected text`);
    await put(ctx, user, file.path, edited, got.headers.etag);
  });
  done();
  return ms;
}

/** Throws unless every file holds what its edits should have left (so a fast failure cannot pass). */
async function checkLanded(ctx, user, files) {
  for (const file of files) {
    const content = JSON.parse((await httpGet(ctx, user, 'read', file.path)).text).content;
    if (content !== file.expected) throw new Error(`${file.path}: after its edits it holds ${content.length} bytes, not the ${file.expected.length} expected (an edit did not land)`);
  }
}

export async function mcpEdit(ctx) {
  const { scale } = ctx;
  const user = await ctx.newUser('mcp-edit');
  const bytes = scale.mcpFileBytes;
  const seq = { mcp: editedFile('/files/mcp/edit/seq-mcp.txt', bytes), http: editedFile('/files/mcp/edit/seq-http.txt', bytes) };
  const many = scale.mcpEditSessions;
  const conc = {
    mcp: Array.from({ length: many }, (_, i) => editedFile(`/files/mcp/edit/mcp-${i}.txt`, bytes)),
    http: Array.from({ length: many }, (_, i) => editedFile(`/files/mcp/edit/http-${i}.txt`, bytes)),
  };
  const floor = await startFilesFloor(ctx);
  const floorFile = floor && editedFile('/files/mcp/edit/seq-floor.txt', bytes);
  const files = [seq.mcp, seq.http, ...conc.mcp, ...conc.http, ...(floorFile ? [floorFile] : [])];
  for (const file of files) await put(ctx, user, file.path, file.initial);
  /** The floor's edit_file of floorFile (its Redis and S3 calls from one bare process): {ms, cpu}. */
  const floorEditStep = async () => {
    const { edit, after, done } = floorFile.next();
    const meter = cpuMeter({ floor: floor.pid, ...(ctx.target.s3Pid && { s3: ctx.target.s3Pid }) });
    const { ms, out } = await floorTool(floor, user, 'edit_file', { path: floorFile.path, edits: [edit] });
    if (out?.sha256 !== sha256(after)) throw new Error(`floor edit_file: answered sha256 ${out?.sha256}, want ${sha256(after)}`);
    done();
    return { ms, cpu: meter() };
  };
  const sessions = await openSessions(ctx, user, many);
  const [session] = sessions;
  try {
    // Unmeasured warm-up of both paths, on the files measured next (their counters move on).
    for (let i = 0; i < 3; i++) {
      await mcpEditStep(session, seq.mcp);
      await httpEditStep(ctx, user, seq.http);
      if (floor) await floorEditStep();
    }
    // Sequential, one session: the two kinds alternate, so drift on a shared machine hits both.
    const mine = [];
    const theirs = [];
    const least = [];
    const cpu = { mcp: {}, http: {}, floor: {} };
    const minSamples = scale.latencyMinSamples;
    const started = performance.now();
    const elapsedS = () => (performance.now() - started) / 1000;
    while ((mine.length < minSamples || elapsedS() < scale.latencyS) && !(mine.length > 0 && elapsedS() >= EDIT_MAX_SECONDS)) {
      let meter = cpuMeter(stackPids(ctx));
      mine.push(await mcpEditStep(session, seq.mcp));
      addCpu(cpu.mcp, meter());
      meter = cpuMeter(stackPids(ctx));
      theirs.push(await httpEditStep(ctx, user, seq.http));
      addCpu(cpu.http, meter());
      if (floor) {
        const step = await floorEditStep();
        least.push(step.ms);
        addCpu(cpu.floor, step.cpu);
      }
    }
    // `many` sessions, each editing a file of its own; against as many HTTP clients.
    const load = { workers: many, seconds: scale.latencyS };
    const httpMany = merged([await closedLoop(ctx, load, (w) => httpEditStep(ctx, user, conc.http[w]))]);
    const mcpMany = merged([await closedLoop(ctx, load, (w) => mcpEditStep(sessions[w], conc.mcp[w]))]);
    await checkLanded(ctx, user, files);

    const p50 = median(mine);
    const base = median(theirs);
    const edits = files.reduce((n, f) => n + Number(f.expected.match(/counter: (\d+)/)[1]), 0);
    return {
      value: p50,
      unit: 'ms',
      baseline: base,
      floor: least.length ? median(least) : null,
      p50,
      p99: quantile(mine, 0.99),
      cpu: {
        per: 'edit',
        system: cpuPerUnit(cpu.mcp, mine.length),
        baseline: cpuPerUnit(cpu.http, theirs.length),
        concurrent: cpuPerUnit(mcpMany.cpu, mcpMany.calls),
        concurrentBaseline: cpuPerUnit(httpMany.cpu, httpMany.calls),
        ...(least.length && { floor: cpuPerUnit(cpu.floor, least.length) }),
      },
      metrics: { overBaseline: p50 / base, concurrentOverBaseline: mcpMany.p50 / httpMany.p50 },
      notes:
        `edit_file (one exact-match edit) of a ${sizeLabel(bytes)} text file, one call at a time from one MCP session (SDK client), alternated with the baseline: ` +
        `p50 ${fmt(p50)} ms, p99 ${fmt(quantile(mine, 0.99))} ms over ${mine.length}; ${cpuPer(cpu.mcp, mine.length, 'edit')}. ` +
        `Baseline: GET /v1/agent/files/download, the same edit, then the whole file uploaded with If-Match (one after the other): ` +
        `p50 ${fmt(base)} ms, p99 ${fmt(quantile(theirs, 0.99))} ms over ${theirs.length}; ${cpuPer(cpu.http, theirs.length, 'edit')}; p50 ÷ baseline p50 ${fmt(p50 / base, 2)}. ` +
        `${many} sessions on ${many} files for ${scale.latencyS} s: ${loadNote(mcpMany)}; ${cpuPer(mcpMany.cpu, mcpMany.calls, 'edit')}; ` +
        `${many} HTTP clients the same way: ${loadNote(httpMany)}; ${cpuPer(httpMany.cpu, httpMany.calls, 'edit')}; p50 ÷ p50 ${fmt(mcpMany.p50 / httpMany.p50, 2)}. ` +
        `Every answer's sha256 checked, and every file's final content (${edits} edits in all, warm-up included) read back. ` +
        (least.length
          ? `Floor: the same tools/call answered by one bare process with the tool's Redis and S3 calls (HGET of the index, S3 GET, S3 PUT of the new bytes, the index's COMMIT script on the bytes read; bench/lib/floor-files.mjs), alternated: p50 ${fmt(median(least))} ms, p99 ${fmt(quantile(least, 0.99))} ms over ${least.length}; ${cpuPer(cpu.floor, least.length, 'edit')}`
          : "No floor: the bench cannot reach the stack's Redis"),
    };
  } finally {
    await closeSessions(sessions);
  }
}
