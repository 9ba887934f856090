// Weighs nice-grpc against our own async gRPC adapters (packages/platform/src/grpc: GrpcServer
// and createClient) on the call agent-get makes: AgentsService.GetAgent answering a fixed,
// realistic Agent (~1.3 KB encoded). Each server runs in its own process, each load generator
// (32 callers, one call in flight each) in another; rounds alternate A B, B A, … so that the
// noise of this shared machine falls on both alike. Reports req/s, p50/p99 and the CPU ms each
// process spends per call (process.cpuUsage inside it), and nice ÷ ours.
//
// Variants:
//   bare  ours: GrpcServer (logger at warn, so no line is written) + createClient (deadline,
//         user id as -bin metadata, request id); nice: createServer with a handler that reads the
//         user from metadata + createClient with the deadline middleware, the same metadata and
//         our channel options (round robin, retries for GetAgent, keepalive).
//   full  what a service really does per call: ours with the info log line (to /dev/null) and
//         the metrics observer; nice with a server middleware doing the same (trace context,
//         span, child logger with the request id, log line, observer, AppError → status).
//
// Run after a build, from the repository root:
//   node bench/compare/grpc-adapters.mjs
// Knobs: COMPARE_SECONDS (5 per measurement), COMPARE_WARMUP_S (1), COMPARE_ROUNDS (4),
// COMPARE_CONCURRENCY (32), COMPARE_VARIANTS (bare,full).
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const role = process.env.COMPARE_ROLE;

/** The Agent agent-get's scenario reads (bench/scenarios/agents.mjs RICH_AGENT), as stored. */
function richAgent() {
  const now = '2026-11-23T12:00:00.000Z';
  return {
    agentId: 'agt_01JDBENCH0000000000000000',
    currentConfigId: 'cfg_01JDBENCH0000000000000001',
    state: 'active',
    createdAt: now,
    updatedAt: now,
    lastChatAt: undefined,
    chatCount: 0,
    config: {
      schemaVersion: 1,
      configId: 'cfg_01JDBENCH0000000000000001',
      agentId: 'agt_01JDBENCH0000000000000000',
      name: 'Bench Agent',
      normalizedName: 'bench agent',
      description: 'An Agent the benchmark reads and writes.',
      goal: 'Answer questions about the workspace quickly and precisely, citing the files it used.',
      instructions: 'Be concise. Prefer lists to prose. Quote file paths exactly. '.repeat(12).trim(),
      conversationStarters: ['What changed today?', 'Summarize the project', 'List the open tasks'],
      responseMode: 'medium',
      threadManagementEnabled: false,
      threadCreationMode: 'manual',
      projectName: '',
      knowledgeFiles: [],
      skills: ['search', 'summarize'],
      connectors: undefined,
      createdAt: now,
      contentDigest: 'sha256:9f2c0d8a7b6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a',
    },
  };
}

/** Our createClient's channel options (client.ts channelOptions), for nice-grpc's channel. */
function ourChannelOptions(path) {
  const [, service, method] = path.split('/');
  const retryPolicy = { maxAttempts: 3, initialBackoff: '0.05s', maxBackoff: '0.5s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] };
  return {
    'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }], methodConfig: [{ name: [{ service, method }], retryPolicy }] }),
    'grpc.enable_retries': 1,
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 2_000,
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 10_000,
    'grpc.max_receive_message_length': 8 * 1024 * 1024,
    'grpc-node.flow_control_window': 1024 * 1024,
  };
}

const USER = 'bench-user';

// ---------------------------------------------------------------------------------------------
// Server processes

async function serveOurs(full) {
  const platform = await import('@workspace/platform');
  const { AgentsServiceService } = await import('@workspace/proto/workspace/agents/v1/agents');
  const agent = richAgent();
  const logger = platform.createLogger('agents', full ? 'info' : 'warn');
  const observe = full ? new platform.Metrics('agents').grpcObserver() : undefined;
  const impl = Object.fromEntries(Object.keys(AgentsServiceService).map((name) => [name, async () => { throw platform.errors.internal(); }]));
  impl.getAgent = async (_req, ctx) => {
    platform.requireUser(ctx);
    return agent;
  };
  const server = new platform.GrpcServer(logger, observe ? { observe } : {});
  server.add(AgentsServiceService, impl);
  return server.listen('127.0.0.1', 0);
}

/** nice-grpc middleware doing what GrpcServer does around every call. */
function niceObserving(platform, nice, logger, observe) {
  const { extractTraceContext, SpanKind, SpanStatusCode, tracer, traceIdOf, isAppError, errors, toGrpcStatus } = platform;
  return async function* observing(call, context) {
    const started = process.hrtime.bigint();
    const requestId = context.metadata.get('x-request-id') ?? randomUUID();
    const method = call.method.path;
    const parent = extractTraceContext({ traceparent: context.metadata.get('traceparent') });
    const span = tracer().startSpan(method, { kind: SpanKind.SERVER, attributes: { 'rpc.system': 'grpc', 'rpc.method': method } }, parent);
    const traceId = traceIdOf(span);
    const log = logger.child(traceId ? { requestId, traceId, method } : { requestId, method });
    let code = 'OK';
    try {
      return yield* call.next(call.request, { ...context, requestId, logger: log });
    } catch (err) {
      const known = isAppError(err) && err.code !== 'INTERNAL' ? err : undefined;
      if (!known) log.error({ err }, 'call failed unexpectedly');
      const status = toGrpcStatus(known ?? errors.internal());
      code = known?.code ?? 'INTERNAL';
      for (const [key, value] of Object.entries(status.metadata.getMap())) context.trailer.set(key, value);
      throw new nice.ServerError(status.code, status.details);
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      log.info({ code, ms: Math.round(seconds * 10_000) / 10 }, 'call');
      observe?.(method, code, seconds);
      span.setAttribute('rpc.workspace.code', code);
      if (code !== 'OK') span.setStatus({ code: SpanStatusCode.ERROR, message: code });
      span.end();
    }
  };
}

async function serveNice(full) {
  const nice = await import('nice-grpc');
  const platform = await import('@workspace/platform');
  const { AgentsServiceService } = await import('@workspace/proto/workspace/agents/v1/agents');
  const agent = richAgent();
  let server = nice.createServer({ 'grpc.max_receive_message_length': 8 * 1024 * 1024 });
  if (full) server = server.use(niceObserving(platform, nice, platform.createLogger('agents', 'info'), new platform.Metrics('agents').grpcObserver()));
  const unimplemented = async () => {
    throw new nice.ServerError(nice.Status.UNIMPLEMENTED, 'not in this bench');
  };
  const impl = Object.fromEntries(Object.keys(AgentsServiceService).map((name) => [name, unimplemented]));
  impl.getAgent = async (_req, context) => {
    const user = context.metadata.get('x-user-id-bin');
    if (!user || user.length === 0) throw new nice.ServerError(nice.Status.UNAUTHENTICATED, 'call carries no user');
    return agent;
  };
  server.add(AgentsServiceService, impl);
  return server.listen('127.0.0.1:0');
}

/** The floor: grpc-js callbacks, no adapter at all (the bare variant's reference). */
async function serveRaw() {
  const grpc = await import('@grpc/grpc-js');
  const { AgentsServiceService } = await import('@workspace/proto/workspace/agents/v1/agents');
  const agent = richAgent();
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 8 * 1024 * 1024 });
  const impl = Object.fromEntries(Object.keys(AgentsServiceService).map((name) => [name, (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED })]));
  impl.getAgent = (call, callback) => (call.metadata.get('x-user-id-bin').length > 0 ? callback(null, agent) : callback({ code: grpc.status.UNAUTHENTICATED }));
  server.addService(AgentsServiceService, impl);
  return new Promise((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))));
}

// ---------------------------------------------------------------------------------------------
// Load generator processes

async function rawCaller(port) {
  const grpc = await import('@grpc/grpc-js');
  const { AgentsServiceService } = await import('@workspace/proto/workspace/agents/v1/agents');
  const m = AgentsServiceService.getAgent;
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), ourChannelOptions(m.path));
  const user = Buffer.from(USER, 'utf8');
  let seq = 0;
  return (agentId) =>
    new Promise((resolve, reject) => {
      const md = new grpc.Metadata();
      md.set('x-request-id', `req-${++seq}`);
      md.set('x-user-id-bin', user);
      client.makeUnaryRequest(m.path, m.requestSerialize, m.responseDeserialize, { agentId }, md, { deadline: Date.now() + 5_000 }, (err, res) => (err ? reject(err) : resolve(res)));
    });
}

async function oursCaller(port) {
  const { createClient } = await import('@workspace/platform');
  const { AgentsServiceService } = await import('@workspace/proto/workspace/agents/v1/agents');
  const client = createClient(AgentsServiceService, { serviceName: 'agents', address: `127.0.0.1:${port}`, deadlineMs: 5_000, idempotent: ['getAgent'] });
  let seq = 0;
  return (agentId) => client.getAgent({ agentId }, { userId: USER, requestId: `req-${++seq}` });
}

async function niceCaller(port, full) {
  const nice = await import('nice-grpc');
  const { deadlineMiddleware } = await import('nice-grpc-client-middleware-deadline');
  const platform = await import('@workspace/platform');
  const { AgentsServiceService } = await import('@workspace/proto/workspace/agents/v1/agents');
  const channel = nice.createChannel(`127.0.0.1:${port}`, nice.ChannelCredentials.createInsecure(), ourChannelOptions(AgentsServiceService.getAgent.path));
  let factory = nice.createClientFactory().use(deadlineMiddleware);
  // Errors as ours would be: AppError from the status (what the gateway needs), on failure only.
  if (full) {
    factory = factory.use(async function* toAppError(call, options) {
      try {
        return yield* call.next(call.request, options);
      } catch (err) {
        throw platform.fromGrpcError(err, 'agents');
      }
    });
  }
  const client = factory.create(AgentsServiceService, channel);
  const user = Buffer.from(USER, 'utf8');
  let seq = 0;
  return (agentId) => {
    const metadata = nice.Metadata({ 'x-request-id': `req-${++seq}`, 'x-user-id-bin': user });
    platform.injectTraceContext({ set: (key, value) => metadata.set(key, value) });
    // The deadline middleware takes a Date or milliseconds from now.
    return client.getAgent({ agentId }, { metadata, deadline: 5_000 });
  };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function generateLoad() {
  const { COMPARE_IMPL: impl, COMPARE_PORT: port, COMPARE_VARIANT: variant } = process.env;
  const concurrency = Number(process.env.COMPARE_CONCURRENCY);
  const warmupMs = Number(process.env.COMPARE_WARMUP_S) * 1000;
  const durationMs = Number(process.env.COMPARE_SECONDS) * 1000;
  const callers = { ours: () => oursCaller(port), nice: () => niceCaller(port, variant === 'full'), raw: () => rawCaller(port) };
  const call = await callers[impl]();
  const agentId = 'agt_01JDBENCH0000000000000000';
  await call(agentId); // connected before the clock starts
  let measuring = false;
  let stopped = false;
  let count = 0;
  let errorCount = 0;
  const latencies = [];
  const worker = async () => {
    while (!stopped) {
      const t0 = performance.now();
      try {
        await call(agentId);
        if (measuring && !stopped) {
          latencies.push(performance.now() - t0);
          count++;
        }
      } catch {
        if (measuring) errorCount++;
      }
    }
  };
  const workers = Array.from({ length: concurrency }, worker);
  await new Promise((r) => setTimeout(r, warmupMs));
  // The parent reads the server's CPU when told; the window is the same for both processes.
  process.send({ msg: 'window-start' });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  measuring = true;
  await new Promise((r) => setTimeout(r, durationMs));
  stopped = true;
  const elapsed = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  process.send({ msg: 'window-end' });
  await Promise.allSettled(workers);
  latencies.sort((a, b) => a - b);
  process.send({
    msg: 'result',
    count,
    errors: errorCount,
    seconds: elapsed / 1000,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    clientCpuMs: (cpu.user + cpu.system) / 1000,
  }, () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------
// The parent: servers, rounds, report

function forkRole(env) {
  return fork(SELF, [], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
}

async function startServer(impl, variant) {
  const child = forkRole({ COMPARE_ROLE: 'server', COMPARE_IMPL: impl, COMPARE_VARIANT: variant });
  const [message] = await Promise.race([once(child, 'message'), once(child, 'exit').then(([code]) => Promise.reject(new Error(`${impl} server exited with ${code}`)))]);
  return { child, port: message.port };
}

/** The server's CPU ms so far (process.cpuUsage inside it). */
async function serverCpuMs(server) {
  server.child.send({ msg: 'cpu' });
  for (;;) {
    const [message] = await once(server.child, 'message');
    if (message.msg === 'cpu') return message.ms;
  }
}

async function measure(server, impl, variant, knobs) {
  const client = forkRole({ COMPARE_ROLE: 'client', COMPARE_IMPL: impl, COMPARE_VARIANT: variant, COMPARE_PORT: String(server.port), ...knobs });
  let s0;
  let s1;
  for (;;) {
    const [message] = await Promise.race([once(client, 'message'), once(client, 'exit').then(([code]) => Promise.reject(new Error(`${impl} client exited with ${code}`)))]);
    if (message.msg === 'window-start') s0 = await serverCpuMs(server);
    else if (message.msg === 'window-end') s1 = await serverCpuMs(server);
    else if (message.msg === 'result') {
      await once(client, 'exit');
      const calls = Math.max(1, message.count);
      return {
        rps: message.count / message.seconds,
        p50: message.p50,
        p99: message.p99,
        errors: message.errors,
        serverCpuPerCall: (s1 - s0) / calls,
        clientCpuPerCall: message.clientCpuMs / calls,
      };
    }
  }
}

const range = (values, digits) => {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const median = Number.isInteger(mid) ? (sorted[mid - 1] + sorted[mid]) / 2 : sorted[Math.floor(mid)];
  return `${median.toFixed(digits)} (${lo.toFixed(digits)}–${hi.toFixed(digits)})`;
};

async function main() {
  const knobs = {
    COMPARE_SECONDS: process.env.COMPARE_SECONDS ?? '5',
    COMPARE_WARMUP_S: process.env.COMPARE_WARMUP_S ?? '1',
    COMPARE_CONCURRENCY: process.env.COMPARE_CONCURRENCY ?? '32',
  };
  const rounds = Number(process.env.COMPARE_ROUNDS ?? 4);
  const variants = (process.env.COMPARE_VARIANTS ?? 'bare,full').split(',');
  console.log(`gRPC adapters: GetAgent, ${knobs.COMPARE_CONCURRENCY} callers, ${knobs.COMPARE_SECONDS} s per measurement after ${knobs.COMPARE_WARMUP_S} s warm-up, ${rounds} rounds\n`);
  for (const variant of variants) {
    // bare also measures plain grpc-js callbacks: what either adapter adds on top of the floor.
    const impls = variant === 'bare' ? ['ours', 'nice', 'raw'] : ['ours', 'nice'];
    const servers = {};
    for (const impl of impls) servers[impl] = await startServer(impl, variant);
    const results = Object.fromEntries(impls.map((impl) => [impl, []]));
    try {
      for (let round = 0; round < rounds; round++) {
        // A B (C), then B A (C A)…: each takes each place in turn.
        const order = impls.map((_, i) => impls[(i + round) % impls.length]);
        if (round % 2 === 1) order.reverse();
        for (const impl of order) {
          const r = await measure(servers[impl], impl, variant, knobs);
          results[impl].push(r);
          console.log(`  ${variant} round ${round + 1} ${impl.padEnd(4)}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, CPU/call server ${(r.serverCpuPerCall * 1000).toFixed(0)} µs, client ${(r.clientCpuPerCall * 1000).toFixed(0)} µs${r.errors ? `, ${r.errors} errors` : ''}`);
        }
      }
    } finally {
      for (const s of Object.values(servers)) s.child.kill('SIGTERM');
    }
    const ratios = results.ours.map((o, i) => results.nice[i].rps / o.rps);
    console.log(`\n${variant}: median (min–max) over ${rounds} rounds`);
    console.log('| adapter | req/s | p50 ms | p99 ms | server CPU µs/call | client CPU µs/call |');
    console.log('|---|---|---|---|---|---|');
    const names = { ours: 'ours (GrpcServer + createClient)', nice: 'nice-grpc', raw: 'grpc-js callbacks (floor)' };
    for (const impl of impls) {
      const rs = results[impl];
      console.log(`| ${names[impl]} | ${range(rs.map((r) => r.rps), 0)} | ${range(rs.map((r) => r.p50), 2)} | ${range(rs.map((r) => r.p99), 2)} | ${range(rs.map((r) => r.serverCpuPerCall * 1000), 0)} | ${range(rs.map((r) => r.clientCpuPerCall * 1000), 0)} |`);
    }
    const cpuRatio = (side) => results.ours.map((o, i) => results.nice[i][side] / o[side]);
    console.log(`nice ÷ ours: req/s ${range(ratios, 2)}, server CPU/call ${range(cpuRatio('serverCpuPerCall'), 2)}, client CPU/call ${range(cpuRatio('clientCpuPerCall'), 2)} (per round)\n`);
  }
}

if (role === 'server') {
  const full = process.env.COMPARE_VARIANT === 'full';
  const servers = { ours: () => serveOurs(full), nice: () => serveNice(full), raw: () => serveRaw() };
  const port = await servers[process.env.COMPARE_IMPL]();
  process.on('message', (message) => {
    if (message.msg !== 'cpu') return;
    const { user, system } = process.cpuUsage();
    process.send({ msg: 'cpu', ms: (user + system) / 1000 });
  });
  process.on('SIGTERM', () => process.exit(0));
  process.send({ msg: 'listening', port });
} else if (role === 'client') {
  await generateLoad();
} else {
  await main();
}
