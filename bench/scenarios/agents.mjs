// Agents scenarios: agent-get and agents-list-10k (agent-patch: agents-patch.mjs; the aliases'
// chats: agents-chat.mjs).
import { performance } from 'node:perf_hooks';
import { startBaselineServer } from '../lib/baseline-server.mjs';
import { startFloorServer } from '../lib/floor-server.mjs';
import { cpuMeter, cpuPer, cpuPerUnit, settled } from '../lib/cpu.mjs';
import { alternating, expectStatus, httpRequest, latencyLoop } from '../lib/http.mjs';
import { over } from '../lib/report.mjs';
import { cannonNotes, createAgents, fmt } from './agents-shared.mjs';

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

/** Runs of each kind of agent-get, alternated (docs/benchmarks.md#noise): 2 s each at the full scale. */
const GET_ROUNDS = 5;

export async function agentGet(ctx) {
  const { scale } = ctx;
  const user = await ctx.newUser('get');
  const [created] = await createAgents(user, 1, 1, () => RICH_AGENT);
  const path = `/v1/agents/${created.agentId}`;
  const got = expectStatus(await user.call('GET', path), 200, 'get the Agent');
  const { redisUrl } = ctx.target;
  const env = ctx.target.floorEnv;
  // The baseline, the stack and its floors, their runs alternated so that the machine's drift hits
  // them alike. The floor: Express → grpc-js → a gRPC server, with the Redis calls the contract
  // makes (the rate limit in the HTTP process, the stored Agent read in the gRPC one), nothing
  // else. When even it stays under the target, the target is out of reach for this design on this
  // machine. Without Redis settings (a given stack) only the bare floor can run.
  const rounds = Math.max(1, Math.min(GET_ROUNDS, Math.floor(scale.durationS / 2)));
  const servers = [];
  let runs;
  try {
    const baseline = await startBaselineServer(got.body);
    servers.push(baseline);
    const ioServer = redisUrl ? await startFloorServer(got.body, { redisUrl, agents: [{ agentId: created.agentId, configId: created.configId }], env }) : undefined;
    if (ioServer) servers.push(ioServer);
    const bareServer = await startFloorServer(got.body, { env });
    servers.push(bareServer);
    const common = { connections: scale.connections };
    const kinds = {
      base: { ...common, url: `${baseline.url}${path}`, measure: () => cpuMeter({ baseline: baseline.pid }) },
      sys: { ...common, url: `${ctx.target.url}${path}`, headers: { authorization: `Bearer ${user.token}` }, measure: () => cpuMeter(ctx.target.pids) },
      ...(ioServer && { ioFloor: { ...common, url: `${ioServer.url}${path}`, measure: () => cpuMeter(ioServer.pids) } }),
      bare: { ...common, url: `${bareServer.url}${path}`, measure: () => cpuMeter(bareServer.pids) },
    };
    // A floor's processes start cold, where the stack has served the scenario's setup: at least a
    // second of warm-up (their connections to Redis and between them), whatever the scale.
    runs = await alternating(kinds, { rounds, seconds: scale.durationS / rounds, warmupS: Math.max(scale.warmupS, 1) });
  } finally {
    for (const server of servers.reverse()) await server.stop();
  }
  const { base, sys, ioFloor, bare } = runs;
  const floor = ioFloor ?? bare;
  if (sys.total === 0 || sys.non2xx + sys.errors + sys.timeouts > 0) ctx.problem('agent-get', `${sys.non2xx} non-2xx, ${sys.errors} errors, ${sys.timeouts} timeouts of ${sys.total}`);
  if (ioFloor && ioFloor.non2xx + ioFloor.errors + ioFloor.timeouts > 0) ctx.problem('agent-get', `floor with I/O: ${ioFloor.non2xx} non-2xx, ${ioFloor.errors} errors of ${ioFloor.total}`);
  const cpu = { per: 'request', system: cpuPerUnit(sys.cpu, sys.total), floor: cpuPerUnit(floor.cpu, floor.total), bareFloor: cpuPerUnit(bare.cpu, bare.total), baseline: cpuPerUnit(base.cpu, base.total) };
  const ioNotes = ioFloor
    ? `${cannonNotes('floor with the I/O (the same, plus the rate-limit EVALSHA in the HTTP process and one HGETALL of a stored Agent hash in the gRPC one)', ioFloor)}; `
    : 'No floor with I/O: the target has no Redis settings; ';
  return {
    value: sys.rps,
    unit: 'req/s',
    baseline: base.rps,
    floor: floor.rps,
    p50: sys.p50,
    p99: sys.p99,
    cpu,
    metrics: { floorRatio: sys.rps / floor.rps, p99OverFloor: sys.p99 / floor.p99, agentsCpuOverFloor: over(cpu.system?.agents, cpu.floor?.['floor-grpc']) },
    notes:
      `${scale.connections} connections, ${scale.durationS} s of each kind in ${rounds} alternated runs (p50 and p99: the worse run); ${Buffer.byteLength(got.text)} B of JSON. ${cannonNotes('baseline (bare Express 5)', base)}. ${cannonNotes('gateway', sys)}. ` +
      `${cannonNotes('bare floor (Express 5 → grpc-js → in-memory gRPC server: the two processes and the hop of this design, nothing else)', bare)}; ${ioNotes}` +
      `floor ÷ baseline ${fmt(floor.rps / base.rps, 3)}, gateway ÷ floor ${fmt(sys.rps / floor.rps, 3)}, gateway ÷ bare floor ${fmt(sys.rps / bare.rps, 3)}`,
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
  // The creates' events are still being relayed and consumed (automations, webhooks): measured
  // meanwhile, the list would share the CPUs with that backlog.
  const settleMs = ctx.target.pids ? await settled(ctx.target.pids) : 0;
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
  // Baseline: bare Express answering the same page; floor: the same through grpc-js with the
  // contract's Redis calls (the rate limit; ZCARD, a rank range and 20 HGETALLs), same loop.
  const page = JSON.parse((await check(listUrl, scale.listAgents)).text);
  // Both start cold, where the stack has served the seeding and the loops above: a second of warm-up each.
  const warm = (url) => latencyLoop(url, {}, { seconds: 1, minSamples: 1 });
  const baseline = await startBaselineServer(page);
  let base;
  try {
    await warm(`${baseline.url}/v1/agents`);
    base = await latencyLoop(`${baseline.url}/v1/agents`, {}, { ...opts, measure: () => cpuMeter({ baseline: baseline.pid }) });
  } finally {
    await baseline.stop();
  }
  let floor;
  if (ctx.target.redisUrl) {
    // An Agent's GET answer: the shape the floor's hashes are written from.
    const one = expectStatus(await user.call('GET', `/v1/agents/${page.agents[0].agentId}`), 200, 'get a listed Agent').body;
    const server = await startFloorServer(one, { redisUrl: ctx.target.redisUrl, list: { body: page, total: scale.listAgents }, env: ctx.target.floorEnv });
    try {
      await warm(`${server.url}/v1/agents`);
      floor = await latencyLoop(`${server.url}/v1/agents`, {}, { ...opts, measure: () => cpuMeter(server.pids) });
    } finally {
      await server.stop();
    }
  }
  return {
    value: plain.p50,
    unit: 'ms',
    baseline: base.p50,
    floor: floor?.p50 ?? null,
    p50: plain.p50,
    p99: plain.p99,
    // Per request without q; with q beside it.
    cpu: { per: 'request', system: cpuPerUnit(plain.cpu, plain.samples), withQ: cpuPerUnit(filtered.cpu, filtered.samples), baseline: cpuPerUnit(base.cpu, base.samples), ...(floor && { floor: cpuPerUnit(floor.cpu, floor.samples) }) },
    metrics: { qOverFloor: over(filtered.p50, floor?.p50) },
    notes:
      `${scale.listAgents} Agents of one user (seeded through the gateway in ${fmt(seedS)} s, ${fmt(scale.listAgents / seedS, 0)} creates/s at ${scale.seedConcurrency} concurrent; the stack then settled in ${fmt(settleMs / 1000)} s). ` +
      `Sequential requests, keep-alive. Without q (page 1, limit 20): p50 ${fmt(plain.p50)} ms, p99 ${fmt(plain.p99)} ms over ${plain.samples}. ` +
      `${cpuPer(plain.cpu, plain.samples, 'request')}. With q=${q} (${matches} matches): p50 ${fmt(filtered.p50)} ms, p99 ${fmt(filtered.p99)} ms over ${filtered.samples}; ${cpuPer(filtered.cpu, filtered.samples, 'request')}. ` +
      `Baseline: bare Express 5 answering the same page (${Buffer.byteLength(JSON.stringify(page))} B), p50 ${fmt(base.p50)} ms over ${base.samples}, ${cpuPer(base.cpu, base.samples, 'request')}. ` +
      (floor
        ? `Floor: the same page through Express 5 → grpc-js → a gRPC server with the contract's Redis calls (the rate-limit EVALSHA; ZCARD, ZREVRANGE and ${page.agents.length} pipelined HGETALLs of an index of ${scale.listAgents}; the page's schedule summaries, ${page.agents.length} pipelined ZRANGEs, in the same gRPC server where the design asks the automations service), p50 ${fmt(floor.p50)} ms over ${floor.samples}, ${cpuPer(floor.cpu, floor.samples, 'request')}`
        : 'No floor: the target has no Redis settings'),
  };
}
