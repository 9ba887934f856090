// The floor of agent-get: the least any gateway of this design can do per request. An Express 5
// app (no auth, no logging, no metrics, no validation) that forwards GET /v1/agents/:id over
// @grpc/grpc-js to a gRPC server in a second process answering every GetAgent with one stored
// Agent message (no Redis). What it reaches on this machine bounds what the real stack can: the
// two processes and the gRPC hop are the architecture's, everything else is taken away.
// Prints {"msg":"listening","port":N} (IPC) when it serves.
import { forkServer } from './child-server.mjs';

const role = process.env.FLOOR_ROLE;

if (role === 'grpc') {
  const grpc = await import('@grpc/grpc-js');
  const { AgentsServiceService, Agent } = await import('@workspace/proto/workspace/agents/v1/agents');
  const agent = Agent.fromJSON(JSON.parse(process.env.FLOOR_BODY ?? '{}'));
  const server = new grpc.Server();
  const unimplemented = (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED });
  const impl = Object.fromEntries(Object.keys(AgentsServiceService).map((name) => [name, unimplemented]));
  impl.getAgent = (_call, callback) => callback(null, agent);
  server.addService(AgentsServiceService, impl);
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) throw err;
    process.send?.({ msg: 'listening', port });
  });
  process.on('SIGTERM', () => server.tryShutdown(() => process.exit(0)));
}

if (role === 'http') {
  const { default: express } = await import('express');
  const grpc = await import('@grpc/grpc-js');
  const { AgentsServiceService } = await import('@workspace/proto/workspace/agents/v1/agents');
  const body = JSON.parse(process.env.FLOOR_BODY ?? '{}');
  const etag = `"${body.currentConfigId ?? 'cfg'}"`;
  const method = AgentsServiceService.getAgent;
  const client = new grpc.Client(`127.0.0.1:${process.env.FLOOR_GRPC_PORT}`, grpc.credentials.createInsecure());
  const app = express();
  app.get('/v1/agents/:id', (req, res) => {
    client.makeUnaryRequest(method.path, method.requestSerialize, method.responseDeserialize, { agentId: req.params.id }, { deadline: Date.now() + 5_000 }, (err) => {
      if (err) return void res.status(503).json({ error: { code: 'UNAVAILABLE' } });
      res.setHeader('ETag', etag);
      res.json(body);
    });
  });
  const server = app.listen(0, '127.0.0.1', () => process.send?.({ msg: 'listening', port: server.address().port }));
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

/** Starts the floor (gRPC server, then the Express app in front of it) answering with `body`. */
export async function startFloorServer(body) {
  const json = JSON.stringify(body);
  const backend = await forkServer(import.meta.url, { FLOOR_ROLE: 'grpc', FLOOR_BODY: json }, 'floor gRPC server');
  try {
    const front = await forkServer(import.meta.url, { FLOOR_ROLE: 'http', FLOOR_BODY: json, FLOOR_GRPC_PORT: String(backend.port) }, 'floor HTTP server');
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
