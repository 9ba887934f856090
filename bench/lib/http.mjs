// HTTP helpers of the bench: one keep-alive client on node:http (the load and the baselines go
// through the same kind of client), autocannon runs, latency loops, a bounded worker pool.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import autocannon from 'autocannon';

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * One request. `body`: a string/Buffer, or a Readable (then give content-length in headers).
 * `sink`: 'text' keeps the body, 'count' only counts its bytes. Resolves with the status,
 * headers, text (sink 'text'), bytes, ms to the first body byte and ms in all.
 */
export function httpRequest(url, { method = 'GET', headers = {}, body, sink = 'text', timeoutMs = 600_000 } = {}) {
  return new Promise((resolve, reject) => {
    const started = nowMs();
    const req = http.request(url, { method, headers, agent, timeout: timeoutMs }, (res) => {
      let ttfbMs;
      let bytes = 0;
      const chunks = [];
      res.on('data', (chunk) => {
        ttfbMs ??= nowMs() - started;
        bytes += chunk.length;
        if (sink === 'text') chunks.push(chunk);
      });
      res.on('end', () => {
        const text = sink === 'text' ? Buffer.concat(chunks).toString('utf8') : undefined;
        resolve({ status: res.statusCode, headers: res.headers, text, bytes, ttfbMs: ttfbMs ?? nowMs() - started, ms: nowMs() - started });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', reject);
    if (body instanceof Readable) {
      pipeline(body, req).catch(reject);
    } else {
      req.end(body);
    }
  });
}

/** A JSON API client for one user: `call(method, path, body)` → {status, body, headers}. */
export function apiClient(baseUrl, token) {
  return async (method, path, json, extraHeaders = {}) => {
    const headers = { authorization: `Bearer ${token}`, ...extraHeaders };
    let body;
    if (json !== undefined) {
      body = JSON.stringify(json);
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const res = await httpRequest(`${baseUrl}${path}`, { method, headers, body });
    let parsed;
    try {
      parsed = res.text ? JSON.parse(res.text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text: res.text, ms: res.ms };
  };
}

/** Throws unless `res.status` is one of `ok` (what was being done names the failure). */
export function expectStatus(res, ok, what) {
  const allowed = Array.isArray(ok) ? ok : [ok];
  if (!allowed.includes(res.status)) throw new Error(`${what}: HTTP ${res.status} ${String(res.text ?? '').slice(0, 300)}`);
  return res;
}

/** Runs `fn(item, index)` over `items` with at most `concurrency` at a time; results in order. */
export async function pool(items, concurrency, fn) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/**
 * An autocannon run (after an unmeasured warm-up of `warmupS` seconds). Returns req/s (mean),
 * latency p50/p99 in ms (2xx only, as autocannon records them) and the failure counts;
 * `measure` (e.g. () => cpuMeter(pids)) is started after the warm-up, its result is `cpu`.
 */
export async function cannon({ warmupS = 0, measure, ...options }) {
  if (warmupS > 0) await autocannon({ ...options, duration: warmupS });
  const stop = measure?.();
  const r = await autocannon(options);
  const cpu = stop?.();
  const statusCounts = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, v]) => [code, v.count]));
  return {
    rps: r.requests.average,
    total: r.requests.total,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCounts,
    cpu,
  };
}

/**
 * Sums runs of one kind: req/s over their whole time (`seconds`), the worse run's p50 and p99,
 * the failures, the status codes and each process's CPU.
 */
export function combineRuns(runs, seconds) {
  const sum = (f) => runs.reduce((a, r) => a + f(r), 0);
  const cpu = {};
  for (const r of runs) for (const [name, ms] of Object.entries(r.cpu ?? {})) cpu[name] = (cpu[name] ?? 0) + ms;
  const statusCounts = {};
  for (const r of runs) for (const [code, n] of Object.entries(r.statusCounts)) statusCounts[code] = (statusCounts[code] ?? 0) + n;
  return {
    rps: sum((r) => r.total) / seconds,
    total: sum((r) => r.total),
    p50: Math.max(...runs.map((r) => r.p50)),
    p99: Math.max(...runs.map((r) => r.p99)),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    statusCounts,
    cpu,
  };
}

/**
 * `rounds` rounds of `run(name)` for every one of `names`, the order reversed every other round
 * (A B C, C B A, …), so that a machine whose speed drifts during a scenario (here it does, by a
 * third within minutes) weighs on every kind alike and their ratio holds. → name → its runs.
 */
export async function inTurns(names, rounds, run) {
  const runs = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 ? [...names].reverse() : names) runs[name].push(await run(name));
  }
  return runs;
}

/**
 * Autocannon runs of several kinds in turns (inTurns): each kind's warm-up (`warmupS`) once, then
 * `rounds` runs of `seconds` of each. `kinds`: name → cannon() options (without duration).
 * → name → its runs combined (combineRuns).
 */
export async function alternating(kinds, { rounds, seconds, warmupS = 0 }) {
  const names = Object.keys(kinds);
  if (warmupS > 0) for (const name of names) await cannon({ ...kinds[name], measure: undefined, duration: warmupS });
  const runs = await inTurns(names, rounds, (name) => cannon({ ...kinds[name], duration: seconds }));
  return Object.fromEntries(names.map((name) => [name, combineRuns(runs[name], seconds * rounds)]));
}

/** The q-th quantile (0..1) of `values` (nearest rank). */
export function quantile(values, q) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export const median = (values) => quantile(values, 0.5);

/**
 * Sequential requests (one at a time, keep-alive) for at least `seconds` and `minSamples`
 * requests (unless `maxSeconds` passed): the latency a single client sees. Every response must be 200.
 * `measure` (e.g. () => cpuMeter(pids)) runs over the loop; its result is `cpu`.
 */
export async function latencyLoop(url, headers, { seconds, minSamples, maxSamples = 2000, maxSeconds = Infinity, measure }) {
  const samples = [];
  const stop = measure?.();
  const started = nowMs();
  const elapsedS = () => (nowMs() - started) / 1000;
  // At least minSamples and `seconds`; but past maxSeconds, whatever was measured (at least one).
  while (samples.length < maxSamples && (samples.length < minSamples || elapsedS() < seconds) && !(samples.length > 0 && elapsedS() >= maxSeconds)) {
    const res = await httpRequest(url, { headers, sink: 'count' });
    if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status}`);
    samples.push(res.ms);
  }
  return { samples: samples.length, p50: quantile(samples, 0.5), p99: quantile(samples, 0.99), cpu: stop?.() };
}

/** The multipart/form-data framing of an upload of `size` bytes: fields first, then the file. */
export function uploadForm(fields, filename, size) {
  const boundary = `----bench${randomBytes(12).toString('hex')}`;
  let head = '';
  for (const [name, value] of Object.entries(fields)) head += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  head += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  return { contentType: `multipart/form-data; boundary=${boundary}`, head: Buffer.from(head), tail: Buffer.from(tail), length: Buffer.byteLength(head) + size + Buffer.byteLength(tail) };
}

/** `times` reads of the file at `path`, one after the other (a long stream from a short file). */
export async function* fileRepeated(path, times = 1) {
  for (let i = 0; i < times; i++) yield* createReadStream(path, { highWaterMark: 1024 * 1024 });
}

/**
 * POST /v1/agent/files/upload of `content` (an async iterable of `size` bytes, or a Buffer) to
 * `path`, streamed with a Content-Length; `ifMatch` (an ETag) stores it only onto those bytes.
 * Resolves with the HTTP result and the parsed body.
 */
export async function upload(baseUrl, token, { path, size, content, onConflict = 'overwrite', ifMatch }) {
  const form = uploadForm({ path, onConflict }, path.slice(path.lastIndexOf('/') + 1), size);
  const body = Readable.from(
    (async function* () {
      yield form.head;
      if (Buffer.isBuffer(content)) yield content;
      else yield* content;
      yield form.tail;
    })(),
    { objectMode: false },
  );
  const res = await httpRequest(`${baseUrl}/v1/agent/files/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': form.contentType, 'content-length': String(form.length), ...(ifMatch && { 'if-match': ifMatch }) },
    body,
  });
  let parsed;
  try {
    parsed = JSON.parse(res.text);
  } catch {
    parsed = undefined;
  }
  return { ...res, body: parsed };
}
