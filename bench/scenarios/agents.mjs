// Agents scenarios: agent-get, agent-patch, agents-list-10k.
import { performance } from 'node:perf_hooks';
import { startBaselineServer } from '../lib/baseline-server.mjs';
import { startFloorServer } from '../lib/floor-server.mjs';
import { cpuMeter, cpuPer, cpuPerUnit } from '../lib/cpu.mjs';
import { cannon, expectStatus, httpRequest, latencyLoop, pool } from '../lib/http.mjs';

/** Fields of a realistic Agent (its GET answers ~2 KB of JSON). */
const RICH_AGENT = {
  name: 'Bench Agent',
  description: 'An Agent the benchmark reads and writes.',
  goal: 'Answer questions about the workspace quickly and precisely, citing the files it used.',
  instructions: 'Be concise. Prefer lists to prose. Quote file paths exactly. '.repeat(12).trim(),
  conversationStarters: ['What changed today?', 'Summarize the project', 'List the open tasks'],
  responseMode: 'medium',
  skills: ['search', 'summarize'],
};

const fmt = (n, digits = 1) => (n === null || n === undefined ? 'n/a' : Number(n).toFixed(digits));

function cannonNotes(label, r) {
  const bad = r.non2xx + r.errors + r.timeouts;
  const codes = Object.entries(r.statusCounts).map(([c, n]) => `${c}×${n}`).join(' ');
  const cpu = cpuPer(r.cpu, r.total, 'request');
  return `${label}: ${fmt(r.rps, 0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.total} requests${bad ? `, ${r.non2xx} non-2xx / ${r.errors} errors / ${r.timeouts} timeouts (${codes})` : ''}${cpu ? ` (${cpu})` : ''}`;
}

async function createAgents(user, count, concurrency, fields) {
  return pool(Array.from({ length: count }, (_, i) => i), concurrency, async (i) => {
    const res = expectStatus(await user.call('POST', '/v1/agents', fields(i)), 201, 'create an Agent');
    return { agentId: res.body.agentId, configId: res.body.currentConfigId };
  });
}

export async function agentGet(ctx) {
  const { scale } = ctx;
  const user = await ctx.newUser('get');
  const [created] = await createAgents(user, 1, 1, () => RICH_AGENT);
  const path = `/v1/agents/${created.agentId}`;
  const got = expectStatus(await user.call('GET', path), 200, 'get the Agent');
  const common = { connections: scale.connections, duration: scale.durationS, warmupS: scale.warmupS };
  const baseline = await startBaselineServer(got.body);
  let base, sys, floor;
  try {
    base = await cannon({ ...common, url: `${baseline.url}${path}`, measure: () => cpuMeter({ baseline: baseline.pid }) });
    sys = await cannon({ ...common, url: `${ctx.target.url}${path}`, headers: { authorization: `Bearer ${user.token}` }, measure: () => cpuMeter(ctx.target.pids) });
  } finally {
    await baseline.stop();
  }
  // The floor: Express → grpc-js → a gRPC server with the answer in memory, nothing else. When
  // even it stays under the target, the target is out of reach for this design on this machine.
  const floorServer = await startFloorServer(got.body);
  try {
    floor = await cannon({ ...common, url: `${floorServer.url}${path}`, measure: () => cpuMeter(floorServer.pids) });
  } finally {
    await floorServer.stop();
  }
  if (sys.total === 0 || sys.non2xx + sys.errors + sys.timeouts > 0) ctx.problem('agent-get', `${sys.non2xx} non-2xx, ${sys.errors} errors, ${sys.timeouts} timeouts of ${sys.total}`);
  const floorRatio = floor.rps / base.rps;
  const cpu = { per: 'request', system: cpuPerUnit(sys.cpu, sys.total), floor: cpuPerUnit(floor.cpu, floor.total), baseline: cpuPerUnit(base.cpu, base.total) };
  return {
    value: sys.rps,
    unit: 'req/s',
    baseline: base.rps,
    floor: floor.rps,
    p50: sys.p50,
    p99: sys.p99,
    cpu,
    metrics: { floorRatio: sys.rps / floor.rps, p99OverFloor: sys.p99 / floor.p99, agentsCpu: cpu.system?.agents },
    notes:
      `${scale.connections} connections, ${scale.durationS} s; ${Buffer.byteLength(got.text)} B of JSON. ${cannonNotes('baseline (bare Express 5)', base)}. ${cannonNotes('gateway', sys)}. ` +
      `${cannonNotes('floor (bare Express 5 → grpc-js → in-memory gRPC server: the two processes and the hop of this design, nothing else)', floor)}: ` +
      `floor ÷ baseline ${fmt(floorRatio, 3)}, gateway ÷ floor ${fmt(sys.rps / floor.rps, 3)}`,
  };
}

export async function agentPatch(ctx) {
  const { scale } = ctx;
  const user = await ctx.newUser('patch');
  // Uncontended: twice as many Agents as connections; each request takes an idle Agent, patches
  // it on its current config and gives it back with the new one, so no two writers ever share one.
  const agents = await createAgents(user, scale.connections * 2, scale.seedConcurrency, (i) => ({ name: `Patch Agent ${i}` }));
  const idle = [...agents];
  let seq = 0;
  const unexpected = {};
  const request = {
    method: 'PATCH',
    path: '/',
    setupRequest: (req, context) => {
      // Never empty while every response hands its Agent back; a spare just in case.
      const agent = idle.shift() ?? agents[seq % agents.length];
      context.agent = agent;
      return {
        ...req,
        path: `/v1/agents/${agent.agentId}`,
        headers: { ...req.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ baseConfigId: agent.configId, description: `patch ${++seq}` }),
      };
    },
    onResponse: (status, body, context) => {
      const agent = context.agent;
      if (!agent) return;
      try {
        const parsed = JSON.parse(body);
        if (status === 200) agent.configId = parsed.currentConfigId;
        else if (parsed.error?.details?.currentConfigId) agent.configId = parsed.error.details.currentConfigId;
      } catch {
        // an unparsable body counts as a failure below; the Agent keeps its last known config
      }
      if (status !== 200) unexpected[status] = (unexpected[status] ?? 0) + 1;
      idle.push(agent);
    },
  };
  // A run that ends drops its in-flight responses (their Agents never come back, and the
  // server may still apply them): after the warm-up, every Agent's current config is read again.
  const resync = async () => {
    await pool(agents, scale.seedConcurrency, async (agent) => {
      agent.configId = expectStatus(await user.call('GET', `/v1/agents/${agent.agentId}`), 200, 'get an Agent').body.currentConfigId;
    });
    idle.splice(0, idle.length, ...agents);
  };
  const common = { connections: scale.connections, duration: scale.durationS, warmupS: scale.warmupS };
  const patchRun = (duration) =>
    cannon({ connections: scale.connections, duration, url: ctx.target.url, headers: { authorization: `Bearer ${user.token}` }, requests: [request], measure: () => cpuMeter(ctx.target.pids) });
  if (scale.warmupS > 0) {
    await patchRun(scale.warmupS);
    // The server may still apply PATCHes the warm-up sent last; let them land before reading.
    await new Promise((r) => setTimeout(r, 1000));
  }
  await resync();
  for (const key of Object.keys(unexpected)) delete unexpected[key];
  const sys = await patchRun(scale.durationS);
  const sample = expectStatus(await user.call('GET', `/v1/agents/${agents[0].agentId}`), 200, 'get an Agent');
  const baseline = await startBaselineServer(sample.body);
  let base;
  try {
    base = await cannon({
      ...common,
      url: `${baseline.url}/v1/agents/${agents[0].agentId}`,
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ baseConfigId: agents[0].configId, description: 'patch' }),
      measure: () => cpuMeter({ baseline: baseline.pid }),
    });
  } finally {
    await baseline.stop();
  }
  if (sys.total === 0 || sys.non2xx + sys.errors + sys.timeouts > 0) {
    ctx.problem('agent-patch', `uncontended: ${sys.non2xx} non-2xx (${JSON.stringify(unexpected)}), ${sys.errors} errors, ${sys.timeouts} timeouts of ${sys.total}`);
  }

  // Contended: one Agent, `connections` writers per round, all on the round's current config.
  const [target] = await createAgents(user, 1, 1, () => ({ name: 'Contended Agent' }));
  const tally = { requests: 0, winners: 0, stale: 0, other: 0, roundsWithOneWinner: 0 };
  const otherStatuses = {};
  const roundMs = [];
  for (let round = 0; round < scale.patchRounds; round++) {
    const current = expectStatus(await user.call('GET', `/v1/agents/${target.agentId}`), 200, 'get the contended Agent');
    const base = current.body.currentConfigId;
    const started = performance.now();
    const statuses = await Promise.all(
      Array.from({ length: scale.connections }, async (_, w) => {
        try {
          return (await user.call('PATCH', `/v1/agents/${target.agentId}`, { baseConfigId: base, description: `round ${round} writer ${w}` })).status;
        } catch {
          return 'error';
        }
      }),
    );
    roundMs.push(performance.now() - started);
    let winners = 0;
    for (const status of statuses) {
      tally.requests++;
      if (status === 200) winners++;
      else if (status === 409) tally.stale++;
      else {
        tally.other++;
        otherStatuses[status] = (otherStatuses[status] ?? 0) + 1;
      }
    }
    tally.winners += winners;
    if (winners === 1) tally.roundsWithOneWinner++;
  }
  const consistent = tally.winners + tally.stale === tally.requests && tally.other === 0 && tally.roundsWithOneWinner === scale.patchRounds;
  if (!consistent) ctx.problem('agent-patch', `contended: ${JSON.stringify(tally)} other statuses ${JSON.stringify(otherStatuses)}`);
  const meanRound = roundMs.reduce((a, b) => a + b, 0) / roundMs.length;
  const cpu = { per: 'request', system: cpuPerUnit(sys.cpu, sys.total), baseline: cpuPerUnit(base.cpu, base.total) };
  const contended =
    `contended (1 Agent, ${scale.connections} writers × ${scale.patchRounds} rounds on one base): ${tally.winners} winners + ${tally.stale} × 409 = ${tally.winners + tally.stale} of ${tally.requests} requests, ` +
    `${tally.other} other${tally.other ? ` ${JSON.stringify(otherStatuses)}` : ''}; exactly one winner in ${tally.roundsWithOneWinner}/${scale.patchRounds} rounds; ` +
    `a round takes ${fmt(meanRound, 0)} ms (${fmt((scale.connections * 1000) / meanRound, 0)} req/s) → ${consistent ? 'invariant holds' : 'INVARIANT BROKEN'}`;
  return {
    value: sys.rps,
    unit: 'req/s',
    baseline: base.rps,
    p50: sys.p50,
    p99: sys.p99,
    cpu,
    metrics: { agentsCpu: cpu.system?.agents, gatewayCpu: cpu.system?.gateway },
    notes: `uncontended (${agents.length} Agents, each writer on its own with the right baseConfigId): ${cannonNotes('gateway', sys)}; ${cannonNotes('baseline (bare Express 5 PATCH, JSON body parsed)', base)}. ${contended}`,
  };
}

export async function agentsList10k(ctx) {
  const { scale } = ctx;
  const user = await ctx.newUser('agents-list');
  const groups = 100;
  const group = (i) => `group-${String(i % groups).padStart(3, '0')}`;
  const started = performance.now();
  await createAgents(user, scale.listAgents, scale.seedConcurrency, (i) => ({
    name: `Bench Agent ${String(i).padStart(5, '0')}`,
    description: `${group(i)}: one of ${scale.listAgents} Agents of one user`,
  }));
  const seedS = (performance.now() - started) / 1000;
  const headers = { authorization: `Bearer ${user.token}` };
  const listUrl = `${ctx.target.url}/v1/agents`;
  const q = group(42);
  const check = async (url, wantTotal) => {
    const res = await httpRequest(url, { headers });
    const body = JSON.parse(res.text);
    if (res.status !== 200 || body.pagination?.total !== wantTotal) throw new Error(`GET ${url}: HTTP ${res.status}, total ${body.pagination?.total} (want ${wantTotal})`);
    return res;
  };
  const matches = Array.from({ length: scale.listAgents }, (_, i) => i).filter((i) => i % groups === 42).length;
  await check(listUrl, scale.listAgents);
  await check(`${listUrl}?q=${q}`, matches);
  const opts = { seconds: scale.latencyS, minSamples: scale.latencyMinSamples, measure: () => cpuMeter(ctx.target.pids) };
  const plain = await latencyLoop(listUrl, headers, opts);
  const filtered = await latencyLoop(`${listUrl}?q=${q}`, headers, opts);
  return {
    value: plain.p50,
    unit: 'ms',
    p50: plain.p50,
    p99: plain.p99,
    // Per request without q; with q beside it.
    cpu: { per: 'request', system: cpuPerUnit(plain.cpu, plain.samples), withQ: cpuPerUnit(filtered.cpu, filtered.samples) },
    metrics: { qP50: filtered.p50 },
    notes:
      `${scale.listAgents} Agents of one user (seeded through the gateway in ${fmt(seedS)} s, ${fmt(scale.listAgents / seedS, 0)} creates/s at ${scale.seedConcurrency} concurrent). ` +
      `Sequential requests, keep-alive. Without q (page 1, limit 20): p50 ${fmt(plain.p50)} ms, p99 ${fmt(plain.p99)} ms over ${plain.samples}. ` +
      `${cpuPer(plain.cpu, plain.samples, 'request')}. With q=${q} (${matches} matches): p50 ${fmt(filtered.p50)} ms, p99 ${fmt(filtered.p99)} ms over ${filtered.samples}; ${cpuPer(filtered.cpu, filtered.samples, 'request')}`,
  };
}
