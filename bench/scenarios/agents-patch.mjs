// agent-patch: uncontended PATCHes (each writer on an Agent of its own) and contended rounds
// (every writer on one Agent and one base: exactly one may win), through the gateway and through
// the floor with the same Redis work (lib/floor-agents.mjs), in the same run.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { startBaselineServer } from '../lib/baseline-server.mjs';
import { startFloorServer } from '../lib/floor-server.mjs';
import { cpuMeter, cpuPerUnit } from '../lib/cpu.mjs';
import { apiClient, cannon, combineRuns, expectStatus, inTurns, pool } from '../lib/http.mjs';
import { over } from '../lib/report.mjs';
import { cannonNotes, createAgents, fmt } from './agents-shared.mjs';

/**
 * The uncontended load on `agents` ([{agentId, configId}]): each request takes an idle Agent,
 * patches it on its current config and gives it back with the new one, so no two writers ever
 * share one. `unexpected` counts the statuses other than 200.
 */
function patchLoad(agents) {
  const idle = [...agents];
  const unexpected = {};
  let seq = 0;
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
  return { request, unexpected, idle };
}

/**
 * Learns every Agent's current config again (a run that ends drops its in-flight responses:
 * their Agents never come back, and the server may still apply them). A PATCH on a base that
 * cannot be current answers 409 with the current config, from the gateway and the floor alike.
 */
async function resync(call, agents, concurrency) {
  await pool(agents, concurrency, async (agent) => {
    const res = expectStatus(await call('PATCH', `/v1/agents/${agent.agentId}`, { baseConfigId: 'cfg_resync', description: 'resync' }), 409, 'resync an Agent');
    agent.configId = res.body.error.details.currentConfigId;
  });
}

/**
 * The uncontended load against `url`: warm() once, then measured(seconds) runs, each on configs
 * learnt anew (resync), its statuses other than 200 counted in `unexpected`.
 */
function uncontendedLoad({ scale, url, call, headers, agents, pids }) {
  const load = patchLoad(agents);
  const run = (duration) => cannon({ connections: scale.connections, duration, url, headers, requests: [load.request], measure: () => cpuMeter(pids) });
  return {
    async warm() {
      if (scale.warmupS > 0) await run(scale.warmupS);
    },
    async measured(seconds) {
      // The server may still apply PATCHes the last run sent; let them land before reading.
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      await resync(call, agents, scale.seedConcurrency);
      load.idle.splice(0, load.idle.length, ...agents);
      for (const key of Object.keys(load.unexpected)) delete load.unexpected[key];
      return { ...(await run(seconds)), unexpected: { ...load.unexpected } };
    },
  };
}

/** Measured runs of each kind, alternated (docs/benchmarks.md#noise): 2 s each at the full scale. */
const PATCH_ROUNDS = 5;
/** How long a run's last PATCHes get to land before the next run reads the configs. */
const SETTLE_MS = 500;

/**
 * The uncontended loads of `kinds` (name → uncontendedLoad) in turns (inTurns): each warmed once,
 * then `rounds` runs of `seconds` each. → name → its runs combined, with their `unexpected` statuses.
 */
async function alternatingLoads(kinds, rounds, seconds) {
  const names = Object.keys(kinds);
  for (const name of names) await kinds[name].warm();
  const runs = await inTurns(names, rounds, (name) => kinds[name].measured(seconds));
  return Object.fromEntries(
    names.map((name) => {
      const unexpected = {};
      for (const r of runs[name]) for (const [code, n] of Object.entries(r.unexpected)) unexpected[code] = (unexpected[code] ?? 0) + n;
      return [name, { ...combineRuns(runs[name], seconds * rounds), unexpected }];
    }),
  );
}

/**
 * `patchRounds` rounds of `connections` concurrent PATCHes of one Agent on one base; the next
 * round's base is what the round's winner made (or what a 409 names). Exactly one may win.
 */
async function contended({ scale, call, agentId, configId }) {
  const tally = { requests: 0, winners: 0, stale: 0, other: 0, roundsWithOneWinner: 0 };
  const otherStatuses = {};
  const roundMs = [];
  let base = configId;
  for (let round = 0; round < scale.patchRounds; round++) {
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: scale.connections }, (_, w) => call('PATCH', `/v1/agents/${agentId}`, { baseConfigId: base, description: `round ${round} writer ${w}` }).catch(() => ({ status: 'error' }))),
    );
    roundMs.push(performance.now() - started);
    const winners = answers.filter((a) => a.status === 200);
    for (const a of answers) {
      tally.requests++;
      if (a.status === 409) tally.stale++;
      else if (a.status !== 200) {
        tally.other++;
        otherStatuses[a.status] = (otherStatuses[a.status] ?? 0) + 1;
      }
    }
    tally.winners += winners.length;
    if (winners.length === 1) tally.roundsWithOneWinner++;
    base = winners[0]?.body?.currentConfigId ?? answers.find((a) => a.status === 409)?.body?.error?.details?.currentConfigId ?? base;
  }
  const consistent = tally.winners + tally.stale === tally.requests && tally.other === 0 && tally.roundsWithOneWinner === scale.patchRounds;
  const meanRound = roundMs.reduce((a, b) => a + b, 0) / roundMs.length;
  const text =
    `${tally.winners} winners + ${tally.stale} × 409 = ${tally.winners + tally.stale} of ${tally.requests} requests, ` +
    `${tally.other} other${tally.other ? ` ${JSON.stringify(otherStatuses)}` : ''}; exactly one winner in ${tally.roundsWithOneWinner}/${scale.patchRounds} rounds; ` +
    `a round takes ${fmt(meanRound, 0)} ms (${fmt((scale.connections * 1000) / meanRound, 0)} req/s) → ${consistent ? 'invariant holds' : 'INVARIANT BROKEN'}`;
  return { consistent, tally, otherStatuses, text };
}

const newId = (prefix) => `${prefix}_${randomBytes(16).toString('hex')}`;

/** The floor, on Agents seeded like the sample (a GET answer): `count` for the uncontended load, one for the race. */
async function startPatchFloor(ctx, sample, count) {
  const agents = Array.from({ length: count + 1 }, () => ({ agentId: newId('agt'), configId: newId('cfg') }));
  const server = await startFloorServer(sample, { redisUrl: ctx.target.redisUrl, agents, env: ctx.target.floorEnv });
  return { server, call: apiClient(server.url, 'floor'), agents: agents.slice(0, count), raced: agents[count] };
}

const failures = (r) => r.non2xx + r.errors + r.timeouts;

export async function agentPatch(ctx) {
  const { scale } = ctx;
  const user = await ctx.newUser('patch');
  const agents = await createAgents(user, scale.connections * 2, scale.seedConcurrency, (i) => ({ name: `Patch Agent ${i}` }));
  const headers = { authorization: `Bearer ${user.token}` };
  const sample = expectStatus(await user.call('GET', `/v1/agents/${agents[0].agentId}`), 200, 'get an Agent').body;
  const rounds = Math.max(1, Math.min(PATCH_ROUNDS, Math.floor(scale.durationS / 2)));
  // The stack's uncontended load and the floor's, alternated; then each one's contended rounds.
  // Without Redis settings (a given stack) there is no floor with the contract's I/O.
  const floorStack = ctx.target.redisUrl ? await startPatchFloor(ctx, sample, agents.length) : undefined;
  let sys, race, floor;
  try {
    const kinds = {
      sys: uncontendedLoad({ scale, url: ctx.target.url, call: user.call, headers, agents, pids: ctx.target.pids }),
      ...(floorStack && { floor: uncontendedLoad({ scale, url: floorStack.server.url, call: floorStack.call, headers: {}, agents: floorStack.agents, pids: floorStack.server.pids }) }),
    };
    const loads = await alternatingLoads(kinds, rounds, scale.durationS / rounds);
    sys = loads.sys;
    const [target] = await createAgents(user, 1, 1, () => ({ name: 'Contended Agent' }));
    race = await contended({ scale, call: user.call, ...target });
    if (floorStack) floor = { load: loads.floor, race: await contended({ scale, call: floorStack.call, ...floorStack.raced }) };
  } finally {
    await floorStack?.server.stop();
  }
  if (sys.total === 0 || failures(sys) > 0) ctx.problem('agent-patch', `uncontended: ${sys.non2xx} non-2xx (${JSON.stringify(sys.unexpected)}), ${sys.errors} errors, ${sys.timeouts} timeouts of ${sys.total}`);
  if (!race.consistent) ctx.problem('agent-patch', `contended: ${JSON.stringify(race.tally)} other statuses ${JSON.stringify(race.otherStatuses)}`);
  if (floor && (floor.load.total === 0 || failures(floor.load) > 0)) ctx.problem('agent-patch', `floor: ${floor.load.non2xx} non-2xx (${JSON.stringify(floor.load.unexpected)}) of ${floor.load.total}`);
  if (floor && !floor.race.consistent) ctx.problem('agent-patch', `floor contended: ${JSON.stringify(floor.race.tally)}`);

  const baseline = await startBaselineServer(sample);
  let base;
  try {
    base = await cannon({
      connections: scale.connections,
      duration: scale.durationS,
      warmupS: scale.warmupS,
      url: `${baseline.url}/v1/agents/${agents[0].agentId}`,
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ baseConfigId: agents[0].configId, description: 'patch' }),
      measure: () => cpuMeter({ baseline: baseline.pid }),
    });
  } finally {
    await baseline.stop();
  }
  const cpu = { per: 'request', system: cpuPerUnit(sys.cpu, sys.total), floor: floor && cpuPerUnit(floor.load.cpu, floor.load.total), baseline: cpuPerUnit(base.cpu, base.total) };
  const floorNotes = floor
    ? `${cannonNotes('floor (bare Express 5 with the rate-limit EVALSHA → grpc-js → a bare gRPC server doing the agents service\'s read, WATCH, four reads and MULTI/EXEC)', floor.load)}; floor contended: ${floor.race.text}; gateway ÷ floor ${fmt(sys.rps / floor.load.rps, 3)}`
    : 'No floor: the target has no Redis settings';
  return {
    value: sys.rps,
    unit: 'req/s',
    baseline: base.rps,
    floor: floor?.load.rps ?? null,
    p50: sys.p50,
    p99: sys.p99,
    cpu,
    metrics: { agentsCpuOverFloor: over(cpu.system?.agents, cpu.floor?.['floor-grpc']), gatewayCpuOverFloor: over(cpu.system?.gateway, cpu.floor?.['floor-http']) },
    notes:
      `uncontended (${agents.length} Agents, each writer on its own with the right baseConfigId; ${scale.durationS} s of the stack and of the floor in ${rounds} alternated runs, p50 and p99 the worse run): ${cannonNotes('gateway', sys)}; ${cannonNotes('baseline (bare Express 5 PATCH, JSON body parsed)', base)}. ` +
      `contended (1 Agent, ${scale.connections} writers × ${scale.patchRounds} rounds on one base): ${race.text}. ${floorNotes}`,
  };
}
