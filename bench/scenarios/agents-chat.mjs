// chat-via-routed-alias: chats started through an alias that routes (two configs, 50/50, a
// routingKey per request) against chats through a plain alias, in alternating runs of the
// same length on the same Agents: the ratio is what routing costs a chat (docs/api/agents.md#rollout).
import { cpuMeter, cpuPerUnit } from '../lib/cpu.mjs';
import { startFloorServer } from '../lib/floor-server.mjs';
import { cannon, combineRuns, expectStatus, inTurns, pool } from '../lib/http.mjs';
import { cannonNotes, createAgents, fmt } from './agents-shared.mjs';

const ROUTED = 'canary';
const PLAIN = 'stable';
/** Measured runs of each kind, taken in turns (inTurns: routed, plain, floor, then floor, plain, routed) so drift hits them alike. */
const ROUNDS = 2;

/** Each Agent gets a second config, a routed alias over both and a plain alias on the second. */
async function prepare(user, agents, concurrency) {
  await pool(agents, concurrency, async (agent) => {
    const path = `/v1/agents/${agent.agentId}`;
    const second = expectStatus(await user.call('PATCH', path, { baseConfigId: agent.configId, description: 'the second config' }), 200, 'patch an Agent').body.currentConfigId;
    const routing = [
      { configId: agent.configId, weight: 50 },
      { configId: second, weight: 50 },
    ];
    expectStatus(await user.call('PUT', `${path}/aliases/${ROUTED}`, { routing }), 201, 'put the routed alias');
    expectStatus(await user.call('PUT', `${path}/aliases/${PLAIN}`, { configId: second }), 201, 'put the plain alias');
    agent.configs = [agent.configId, second];
  });
}

/** POST …/chats through `alias` on the Agents in turn, a routing key of its own per request. */
function chatRequest(agents, alias) {
  let seq = 0;
  return {
    method: 'POST',
    path: '/',
    setupRequest: (req) => {
      const n = seq++;
      return {
        ...req,
        path: `/v1/agents/${agents[n % agents.length].agentId}/chats`,
        headers: { ...req.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ alias, routingKey: `customer-${n}` }),
      };
    },
  };
}

/** The routed alias's chats per config over all Agents (its stats since the alias was made). */
async function routedSplit(user, agents, concurrency) {
  const split = {};
  await pool(agents, concurrency, async (agent) => {
    const stats = expectStatus(await user.call('GET', `/v1/agents/${agent.agentId}/aliases/${ROUTED}/stats`), 200, 'get the alias stats').body;
    stats.configs.forEach((c, i) => (split[i] = (split[i] ?? 0) + c.chats));
  });
  return Object.values(split);
}

export async function chatViaRoutedAlias(ctx) {
  const { scale } = ctx;
  const user = await ctx.newUser('chat');
  // As many Agents as connections: chats of one Agent are ordered by its WATCH, and it is the
  // alias's cost that is measured here, not that queue.
  const agents = await createAgents(user, scale.connections, scale.seedConcurrency, (i) => ({ name: `Chat Agent ${i}` }));
  await prepare(user, agents, scale.seedConcurrency);
  const headers = { authorization: `Bearer ${user.token}` };
  const run = (alias, duration) =>
    cannon({ connections: scale.connections, duration, url: ctx.target.url, headers, requests: [chatRequest(agents, alias)], measure: () => cpuMeter(ctx.target.pids) });
  if (scale.warmupS > 0) {
    await run(ROUTED, scale.warmupS);
    await run(PLAIN, scale.warmupS);
  }
  const each = Math.max(1, Math.round(scale.durationS / ROUNDS));
  // The floor: a chat through a plain alias with the contract's I/O (the rate limit; the
  // service's WATCH/MULTI of a new chat) behind Express 5 and grpc-js, on Agents of its own.
  const one = expectStatus(await user.call('GET', `/v1/agents/${agents[0].agentId}`), 200, 'get an Agent').body;
  const floorServer = ctx.target.redisUrl
    ? await startFloorServer(one, { redisUrl: ctx.target.redisUrl, agents: agents.map((a) => ({ agentId: a.agentId, configId: a.configs[1] })), alias: PLAIN, env: ctx.target.floorEnv })
    : undefined;
  const floorRun = (duration) =>
    cannon({ connections: scale.connections, duration, url: floorServer.url, requests: [chatRequest(agents, PLAIN)], measure: () => cpuMeter(floorServer.pids) });
  let runs;
  try {
    if (floorServer) await floorRun(Math.max(1, scale.warmupS));
    const kinds = { routed: () => run(ROUTED, each), plain: () => run(PLAIN, each), ...(floorServer && { floor: () => floorRun(each) }) };
    runs = await inTurns(Object.keys(kinds), ROUNDS, (name) => kinds[name]());
  } finally {
    await floorServer?.stop();
  }
  const routed = combineRuns(runs.routed, each * ROUNDS);
  const plain = combineRuns(runs.plain, each * ROUNDS);
  const floor = runs.floor ? combineRuns(runs.floor, each * ROUNDS) : undefined;
  for (const [label, r] of [['routed', routed], ['plain', plain], ...(floor ? [['floor', floor]] : [])]) {
    if (r.total === 0 || r.non2xx + r.errors + r.timeouts > 0) ctx.problem('chat-via-routed-alias', `${label}: ${r.non2xx} non-2xx ${JSON.stringify(r.statusCounts)}, ${r.errors} errors, ${r.timeouts} timeouts of ${r.total}`);
  }
  // Every chat the routed runs answered is counted on one of the two configs (a run's last
  // requests may land after it ended: more, never fewer); both get a share.
  const split = await routedSplit(user, agents, scale.seedConcurrency);
  const counted = split.reduce((a, b) => a + b, 0);
  const warmed = scale.warmupS > 0 ? 'warm-up included' : 'no warm-up';
  if (counted < routed.total || split.some((n) => n === 0)) ctx.problem('chat-via-routed-alias', `the routed alias counted ${JSON.stringify(split)} chats (${warmed}) for ${routed.total} answered`);
  return {
    value: routed.rps,
    unit: 'req/s',
    baseline: plain.rps,
    floor: floor?.rps ?? null,
    p50: routed.p50,
    p99: routed.p99,
    cpu: { per: 'request', system: cpuPerUnit(routed.cpu, routed.total), baseline: cpuPerUnit(plain.cpu, plain.total), ...(floor && { floor: cpuPerUnit(floor.cpu, floor.total) }) },
    notes:
      `POST /v1/agents/{id}/chats on ${agents.length} Agents in turn, ${scale.connections} connections, ${ROUNDS} alternating runs of ${each} s each. ` +
      `${cannonNotes(`through the routed alias (2 configs 50/50, a routingKey per request)`, routed)}; ${cannonNotes('baseline: through a plain alias (the same body)', plain)}. ` +
      `The routed alias's chats per config: ${split.join(' / ')} (${warmed}; ${fmt((100 * (split[0] ?? 0)) / Math.max(1, counted), 1)} % on the first). p50 and p99: the worse run of each kind. ` +
      (floor
        ? `${cannonNotes("floor: the plain alias's chat through Express 5 → grpc-js → a gRPC server with the contract's Redis calls (the rate-limit EVALSHA; WATCH, the Agent, alias and config reads, MULTI/EXEC of the chat, its index, counts, pin, alias stats and outbox event), alternated", floor)}`
        : 'No floor: the target has no Redis settings'),
  };
}
