// import-hostile: hostile Agent archives (agent.json = 16 MiB of nested brackets, then 16 MiB of
// small values, stored uncompressed) imported three at once, while another user reads an Agent.
// Value: that user's p99 latency meanwhile; baseline: the same GET's p99 with nothing else
// running. The gateway's peak RSS growth (sampled every 10 ms) and its longest event-loop delay
// are metrics (launched stack only).
import { performance } from 'node:perf_hooks';
import { rawZip } from '@workspace/testkit';
import { MiB } from '../lib/config.mjs';
import { expectStatus, httpRequest, latencyLoop, quantile } from '../lib/http.mjs';
import { fmt, rss } from './files-shared.mjs';
import { startFloorServer } from '../lib/floor-server.mjs';
import { over } from '../lib/report.mjs';
import { EVENT_LOOP_SAMPLE_MS } from '@workspace/platform';

/**
 * The gateway's longest event-loop delay (ms) since the last call: prom-client's
 * nodejs_eventloop_lag_max_seconds covers the time since the previous scrape, and is the longest
 * time between two of its samples, so the sampling interval is taken off. Undefined without a
 * metrics URL (a stack not launched here).
 */
async function eventLoopLagMax(metricsUrl) {
  if (!metricsUrl) return undefined;
  const res = await httpRequest(metricsUrl);
  const seconds = /^nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? ([0-9.e+-]+)$/m.exec(res.text ?? '')?.[1];
  return seconds === undefined ? undefined : Math.max(0, Number(seconds) * 1000 - EVENT_LOOP_SAMPLE_MS);
}

/** POST /v1/agents/import of `zip` as `token`. */
function importZip(baseUrl, token, form) {
  return httpRequest(`${baseUrl}/v1/agents/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': form.contentType, 'content-length': String(form.body.length) },
    body: form.body,
  });
}

/** The multipart body of an import of `zip` (built once, sent as often as needed). */
function importForm(zip) {
  const boundary = `----bench${Math.random().toString(16).slice(2)}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="agent.zip"\r\nContent-Type: application/zip\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat([head, zip, tail]) };
}

/** agent.json of `bytes` bytes: `[[[…]]]` (nested far deeper than allowed), or `[[],[],…]` (shallow, millions of values). */
function hostileJson(kind, bytes) {
  if (kind === 'brackets') return Buffer.concat([Buffer.alloc(bytes / 2, '['), Buffer.alloc(bytes / 2, ']')]);
  const inner = bytes - 4 - ((bytes - 4) % 3);
  return Buffer.concat([Buffer.from('['), Buffer.alloc(inner, '[],'), Buffer.from('[]]')]);
}

/**
 * Each phase's rounds of three concurrent imports of its archive to `importUrl` while one GET
 * after another of `getUrl` runs, with the peak RSS of `pid` (every 10 ms) and the longest
 * event-loop delay from `lagUrl` per phase: {answers, measured, all} (all: every GET's ms).
 */
async function underAttack({ importUrl, token, getUrl, headers, pid, lagUrl, phases }) {
  const all = [];
  const answers = [];
  const measured = [];
  for (const phase of phases) {
    const before = pid ? rss(pid) : undefined;
    let peak = before ?? 0;
    const sampler = pid ? setInterval(() => (peak = Math.max(peak, rss(pid))), 10) : undefined;
    const samples = [];
    const started = performance.now();
    try {
      for (let round = 0; round < phase.rounds; round++) {
        let done = false;
        const imports = Promise.all([0, 1, 2].map(() => importZip(importUrl, token, phase.form))).finally(() => (done = true));
        do {
          const res = await httpRequest(getUrl, { headers, sink: 'count' });
          if (res.status !== 200) throw new Error(`GET the bystander's Agent during hostile imports (${phase.label}): HTTP ${res.status}`);
          samples.push(res.ms);
        } while (!done);
        answers.push(...(await imports));
      }
    } finally {
      clearInterval(sampler);
    }
    all.push(...samples);
    measured.push({ ...phase, samples, seconds: (performance.now() - started) / 1000, lag: await eventLoopLagMax(lagUrl), growth: before === undefined ? undefined : (peak - before) / MiB, before, peak });
  }
  return { answers, measured, all };
}

export async function importHostile(ctx) {
  const { scale } = ctx;
  const attacker = await ctx.newUser('import-attacker');
  const other = await ctx.newUser('import-other');
  const created = expectStatus(await other.call('POST', '/v1/agents', { name: 'Bystander' }), 201, 'create an Agent');
  const url = `${ctx.target.url}/v1/agents/${created.body.agentId}`;
  const headers = { authorization: `Bearer ${other.token}` };
  const phases = [
    { label: 'nested brackets', kind: 'brackets', rounds: scale.hostileRounds },
    { label: 'small values [[],[],…]', kind: 'values', rounds: scale.hostileValuesRounds },
  ].map((p) => ({ ...p, form: importForm(rawZip([{ name: 'agent.json', data: hostileJson(p.kind, scale.hostileJsonBytes) }])) }));

  const lagUrl = ctx.target.metricsUrls?.gateway;
  await eventLoopLagMax(lagUrl); // starts the window
  const quiet = await latencyLoop(url, headers, { seconds: scale.latencyS, minSamples: scale.latencyMinSamples });
  const quietLag = await eventLoopLagMax(lagUrl);
  const gateway = ctx.target.pids?.gateway;
  const system = await underAttack({ importUrl: ctx.target.url, token: attacker.token, getUrl: url, headers, pid: gateway, lagUrl, phases });
  const { answers, measured, all } = system;
  // The floor: the same load on a bare HTTP process in front of the agent-get floor with its
  // I/O (lib/floor-server.mjs), which reads every byte of each import and refuses it at its end:
  // what receiving 3 × 16 MiB at once costs another user on this machine, nothing of ours.
  const floorServer = ctx.target.redisUrl
    ? await startFloorServer(created.body, { redisUrl: ctx.target.redisUrl, agents: [{ agentId: created.body.agentId, configId: created.body.currentConfigId }], env: ctx.target.floorEnv })
    : undefined;
  let floor;
  try {
    if (floorServer) {
      const floorUrl = `${floorServer.url}/v1/agents/${created.body.agentId}`;
      await latencyLoop(floorUrl, {}, { seconds: 1, minSamples: 1 });
      floor = await underAttack({ importUrl: floorServer.url, token: '', getUrl: floorUrl, headers: {}, pid: floorServer.pids['floor-http'], phases });
    }
  } finally {
    await floorServer?.stop();
  }
  const refused = answers.filter((r) => r.status === 400 && JSON.parse(r.text).error?.code === 'INVALID_ARGUMENT').length;
  if (refused !== answers.length) ctx.problem('import-hostile', `${answers.length - refused} of ${answers.length} hostile imports were not refused with 400 (${answers.map((r) => r.status).join(', ')})`);
  const most = (key) => (measured.some((m) => m[key] === undefined) ? undefined : Math.max(...measured.map((m) => m[key])));
  const p99 = quantile(all, 0.99);
  const phaseNote = (m) =>
    `${m.label}: ${m.rounds} round${m.rounds === 1 ? '' : 's'} of 3 concurrent imports of a ${fmt(m.form.body.length / MiB, 0)} MiB archive (agent.json stored) in ${fmt(m.seconds, 1)} s; ` +
    `another user's GET of an Agent meanwhile ${m.samples.length} requests, p50 ${fmt(quantile(m.samples, 0.5), 1)} ms, p99 ${fmt(quantile(m.samples, 0.99), 1)} ms; ` +
    (m.before === undefined ? 'gateway RSS n/a (no pid)' : `gateway RSS ${fmt(m.before / MiB, 0)} MiB before, peak ${fmt(m.peak / MiB, 0)} MiB (+${fmt(m.growth, 0)} MiB)`) +
    `, longest event-loop delay ${fmt(m.lag, 1)} ms`;
  const floorP99 = floor ? quantile(floor.all, 0.99) : null;
  const floorGrowth = floor && Math.max(...floor.measured.map((m) => m.growth ?? 0));
  return {
    value: p99,
    unit: 'ms',
    baseline: quiet.p99,
    floor: floorP99,
    p50: quantile(all, 0.5),
    p99,
    metrics: { rssGrowthMiB: most('growth'), lagOverQuietP99: over(most('lag'), quiet.p99) },
    notes:
      `${refused}/${answers.length} hostile imports refused with 400. ${measured.map(phaseNote).join('. ')}. ` +
      `Baseline: the same GET with nothing else running, p50 ${fmt(quiet.p50, 1)} ms, p99 ${fmt(quiet.p99, 1)} ms, longest event-loop delay ${fmt(quietLag, 1)} ms. ` +
      (floor
        ? `Floor: the same imports and GETs against the agent-get floor with its I/O, whose HTTP process reads every byte of an import and refuses it at its end: the GET's p50 ${fmt(quantile(floor.all, 0.5), 1)} ms, p99 ${fmt(floorP99, 1)} ms over ${floor.all.length}; its RSS +${fmt(floorGrowth, 0)} MiB at most.`
        : 'No floor: the target has no Redis settings.'),
  };
}
