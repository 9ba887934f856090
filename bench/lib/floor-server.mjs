// The floors of agent-get and agent-patch: the least any gateway of this design can do per
// request. An Express 5 app (no auth, no logging, no metrics, no validation) forwarding
// GET and PATCH /v1/agents/:id over @grpc/grpc-js to a gRPC server in a second process.
//
// - bare (no redisUrl): the gRPC server answers every GetAgent with one Agent from memory, the
//   HTTP process touches nothing: the two processes and the hop, everything else taken away.
// - with the contract's I/O (redisUrl): the HTTP process makes the gateway's rate-limit call
//   (one EVALSHA of its token-bucket script, on a key of its own) per request, and the gRPC
//   server does the agents service's Redis work: one HGETALL of a stored Agent hash per GET,
//   per PATCH the config commit of floor-agents.mjs (read, WATCH, reads, MULTI/EXEC), and per
//   GET /v1/agents (when given a list to answer) the page read of a user's 10,000 Agents: ZCARD,
//   a rank range of the index, one pipelined HGETALL per Agent on the page; per chat through an
//   alias, the service's WATCH/MULTI of a new chat (floor-agents.mjs floorChats); an import
//   (POST /v1/agents/import) is read to its end and refused.
//
// What the floor reaches on this machine bounds what the real stack can.
// Prints {"msg":"listening","port":N} (IPC) when it serves.
import { createHash, randomUUID } from 'node:crypto';
import { forkServer } from './child-server.mjs';

const role = process.env.FLOOR_ROLE;
/** The launched stack's gateway limits (packages/testkit stack.ts): generous, never refusing here. */
const RATE = 100_000;
const DEADLINE_MS = 5_000;

async function redisOf(url) {
  if (!url) return undefined;
  const { Redis } = await import('ioredis');
  return new Redis(url);
}

if (role === 'grpc') {
  const grpc = await import('@grpc/grpc-js');
  const { AgentsServiceService, Agent, AgentListItem } = await import('@workspace/proto/workspace/agents/v1/agents');
  const { FloorCommits, dropKeys, floorChats, floorKeys, readPage, seedAgents, seedAliases, seedIndex } = await import('./floor-agents.mjs');
  const body = JSON.parse(process.env.FLOOR_BODY ?? '{}');
  const agent = Agent.fromJSON(body);
  const redis = await redisOf(process.env.FLOOR_REDIS_URL);
  const keys = floorKeys(process.env.FLOOR_RUN ?? randomUUID());
  const seeded = JSON.parse(process.env.FLOOR_AGENTS ?? '[]');
  if (redis) await seedAgents(redis, keys, body, seeded);
  const commits = redis && new FloorCommits(redis, keys, body);
  const server = new grpc.Server();
  const unimplemented = (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED });
  const impl = Object.fromEntries(Object.keys(AgentsServiceService).map((name) => [name, unimplemented]));
  // The GET reads the hash of a stored Agent (the service's one read; its config comes from its cache).
  const readKey = keys.agent(seeded[0]?.agentId ?? agent.agentId);
  impl.getAgent = redis
    ? (_call, callback) => redis.hgetall(readKey).then(() => callback(null, agent), (err) => callback({ code: grpc.status.UNAVAILABLE, details: err.message }))
    : (_call, callback) => callback(null, agent);
  // The list: the answer's Agents as gRPC list items, from a page read of the seeded index.
  const list = process.env.FLOOR_LIST ? JSON.parse(process.env.FLOOR_LIST) : undefined;
  if (redis && list) {
    await seedIndex(redis, keys, body, list.body.agents, list.total);
    const items = list.body.agents.map((a) => AgentListItem.fromJSON(a));
    impl.listAgents = ({ request }, callback) => {
      const limit = request.limit || 20;
      const page = Number(request.page) || 1;
      readPage(redis, keys, (page - 1) * limit, limit).then(
        (total) => callback(null, { agents: items, total, page, limit, pages: Math.ceil(total / limit) }),
        (err) => callback({ code: grpc.status.UNAVAILABLE, details: err.message }),
      );
    };
  }
  // Chats through a plain alias (FLOOR_ALIAS) of every seeded Agent.
  const chats = redis && process.env.FLOOR_ALIAS ? floorChats(redis, keys) : undefined;
  if (chats) {
    await seedAliases(redis, keys, seeded, process.env.FLOOR_ALIAS);
    impl.createChat = ({ request }, callback) =>
      chats.create(request.agentId, request.alias ?? '', request.title ?? 'New chat').then(
        (chat) => (chat ? callback(null, chat) : callback({ code: grpc.status.NOT_FOUND })),
        (err) => callback({ code: grpc.status.UNAVAILABLE, details: err.message }),
      );
  }
  if (commits) {
    impl.updateAgent = ({ request }, callback) => {
      const description = request.fields?.description ?? '';
      commits.commit(request.agentId, request.baseConfigId, description).then(
        (out) => {
          if (out.status === 'committed') return callback(null, { ...agent, agentId: request.agentId, currentConfigId: out.configId, config: { ...agent.config, configId: out.configId, description } });
          if (out.status === 'gone') return callback({ code: grpc.status.NOT_FOUND });
          const metadata = new grpc.Metadata();
          metadata.set('current-config-id', out.currentConfigId);
          callback({ code: grpc.status.FAILED_PRECONDITION, details: 'stale baseConfigId', metadata });
        },
        (err) => callback({ code: grpc.status.UNAVAILABLE, details: err.message }),
      );
    };
  }
  server.addService(AgentsServiceService, impl);
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) throw err;
    process.send?.({ msg: 'listening', port });
  });
  process.on('SIGTERM', () =>
    server.tryShutdown(async () => {
      if (redis) {
        await commits.close();
        await chats?.close();
        await dropKeys(redis, keys);
        await redis.quit();
      }
      process.exit(0);
    }),
  );
}

if (role === 'http') {
  const { default: express } = await import('express');
  const grpc = await import('@grpc/grpc-js');
  const { AgentsServiceService } = await import('@workspace/proto/workspace/agents/v1/agents');
  const body = JSON.parse(process.env.FLOOR_BODY ?? '{}');
  const etag = `"${body.currentConfigId ?? 'cfg'}"`;
  const client = new grpc.Client(`127.0.0.1:${process.env.FLOOR_GRPC_PORT}`, grpc.credentials.createInsecure());
  const unary = (method, request) =>
    new Promise((resolve, reject) => client.makeUnaryRequest(method.path, method.requestSerialize, method.responseDeserialize, request, { deadline: Date.now() + DEADLINE_MS }, (err, out) => (err ? reject(err) : resolve(out))));
  const redis = await redisOf(process.env.FLOOR_REDIS_URL);
  // The gateway's rate limit: one EVALSHA of its script per request, with the arguments rate-limiter-flexible sends.
  const rateKey = `bench-floor:rate:user:${createHash('sha256').update(randomUUID()).digest('hex')}`;
  if (redis) {
    const { tokenBucketScript } = await import('@workspace/gateway/rate-limit');
    redis.defineCommand('floorRate', { numberOfKeys: 1, lua: tokenBucketScript(RATE, RATE) });
  }
  /** Draws a token (with the I/O); false when the answer was sent (refused). */
  const admitted = async (res) => {
    if (!redis) return true;
    const [consumed, msBeforeNext] = await redis.floorRate(rateKey, 1, 1, RATE, 1);
    const remaining = Math.max(0, RATE - consumed);
    res.setHeader('RateLimit-Limit', String(RATE));
    res.setHeader('RateLimit-Remaining', String(remaining));
    res.setHeader('RateLimit-Reset', String(Math.max(1, Math.ceil(msBeforeNext / 1000))));
    if (consumed <= RATE) return true;
    res.status(429).json({ error: { code: 'RATE_LIMITED' } });
    return false;
  };
  const unavailable = (res) => res.status(503).json({ error: { code: 'UNAVAILABLE' } });
  const list = process.env.FLOOR_LIST ? JSON.parse(process.env.FLOOR_LIST) : undefined;
  const app = express();
  // An import read to its last byte and refused (import-hostile: receiving is all a floor must do).
  app.post('/v1/agents/import', (req, res) => {
    req.on('data', () => undefined);
    req.on('end', () => res.status(400).json({ error: { code: 'INVALID_ARGUMENT' } }));
  });
  app.post('/v1/agents/:id/chats', express.json({ limit: '1mb' }), async (req, res) => {
    try {
      if (!(await admitted(res))) return;
      const chat = await unary(AgentsServiceService.createChat, { agentId: req.params.id, alias: req.body?.alias, routingKey: req.body?.routingKey });
      res.status(201).json(chat);
    } catch (err) {
      if (err?.code === grpc.status.NOT_FOUND) return res.status(404).json({ error: { code: 'NOT_FOUND' } });
      unavailable(res);
    }
  });
  if (list) {
    app.get('/v1/agents', async (_req, res) => {
      try {
        if (!(await admitted(res))) return;
        await unary(AgentsServiceService.listAgents, { page: 1, limit: 20 });
        res.json(list.body);
      } catch {
        unavailable(res);
      }
    });
  }
  app.get('/v1/agents/:id', async (req, res) => {
    try {
      if (!(await admitted(res))) return;
      await unary(AgentsServiceService.getAgent, { agentId: req.params.id });
      res.setHeader('ETag', etag);
      res.json(body);
    } catch {
      unavailable(res);
    }
  });
  app.patch('/v1/agents/:id', express.json({ limit: '1mb' }), async (req, res) => {
    try {
      if (!(await admitted(res))) return;
      const { baseConfigId, description } = req.body;
      const agent = await unary(AgentsServiceService.updateAgent, { agentId: req.params.id, baseConfigId, fields: { description } });
      res.setHeader('ETag', `"${agent.currentConfigId}"`);
      res.json({ ...body, agentId: agent.agentId, currentConfigId: agent.currentConfigId, config: { ...body.config, configId: agent.currentConfigId, description } });
    } catch (err) {
      if (err?.code !== grpc.status.FAILED_PRECONDITION) return unavailable(res);
      res.status(409).json({ error: { code: 'STALE_AGENT_CONFIG', details: { currentConfigId: err.metadata.get('current-config-id')[0] } } });
    }
  });
  const server = app.listen(0, '127.0.0.1', () => process.send?.({ msg: 'listening', port: server.address().port }));
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(async () => {
      if (redis) {
        await redis.del(rateKey);
        await redis.quit();
      }
      process.exit(0);
    });
  });
}

/**
 * Starts a floor (gRPC server, then the Express app in front of it) answering with `body` (a
 * GET answer of a real Agent). With `redisUrl` it has the contract's I/O; `agents`
 * ([{agentId, configId}]) are the Agents its PATCHes may write (the GET reads the first);
 * `env` is added to both processes' (the profiler's, say). `list` ({body, total}: a GET
 * /v1/agents answer and how many Agents the user has) adds that route, answering `body` after
 * the page read of an index of `total` Agents. `alias` gives every Agent of `agents` that plain
 * alias and adds POST /v1/agents/:id/chats through it (floor-agents.mjs floorChats).
 */
export async function startFloorServer(body, { redisUrl, agents = [], list, alias, env = {} } = {}) {
  const json = JSON.stringify(body);
  const io = { ...env, ...(redisUrl ? { FLOOR_REDIS_URL: redisUrl } : {}), ...(list ? { FLOOR_LIST: JSON.stringify(list) } : {}), ...(alias ? { FLOOR_ALIAS: alias } : {}) };
  const backend = await forkServer(import.meta.url, { FLOOR_ROLE: 'grpc', BENCH_CPU_PROF_NAME: 'floor-grpc', FLOOR_BODY: json, FLOOR_RUN: randomUUID(), FLOOR_AGENTS: JSON.stringify(agents), ...io }, 'floor gRPC server');
  try {
    const front = await forkServer(import.meta.url, { FLOOR_ROLE: 'http', BENCH_CPU_PROF_NAME: 'floor-http', FLOOR_BODY: json, FLOOR_GRPC_PORT: String(backend.port), ...io }, 'floor HTTP server');
    return {
      url: `http://127.0.0.1:${front.port}`,
      pids: { 'floor-http': front.pid, 'floor-grpc': backend.pid },
      stop: async () => {
        await front.stop();
        await backend.stop();
      },
    };
  } catch (err) {
    await backend.stop();
    throw err;
  }
}
