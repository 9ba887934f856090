// The bare baseline: an Express 5 app in its own process that answers GET /v1/agents/:id with
// the JSON of a real Agent (BASELINE_BODY), PATCH with the same after parsing the JSON body, and
// GET /v1/agents with the same body (a list page, for agents-list-10k), as fast as Express
// itself allows. Prints {"msg":"listening","port":N} when it serves.
import { forkServer } from './child-server.mjs';

if (process.env.BASELINE_CHILD === '1') {
  const { default: express } = await import('express');
  const body = JSON.parse(process.env.BASELINE_BODY ?? '{}');
  const etag = `"${body.currentConfigId ?? 'cfg'}"`;
  const app = express();
  app.get('/v1/agents/:id', (_req, res) => {
    res.setHeader('ETag', etag);
    res.json(body);
  });
  app.get('/v1/agents', (_req, res) => res.json(body));
  app.patch('/v1/agents/:id', express.json({ limit: '1mb' }), (_req, res) => {
    res.setHeader('ETag', etag);
    res.json(body);
  });
  const server = app.listen(0, '127.0.0.1', () => {
    process.send?.({ msg: 'listening', port: server.address().port });
  });
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

/** Starts the baseline server in a child process answering with `body`; resolves with its URL and stop(). */
export async function startBaselineServer(body) {
  const server = await forkServer(import.meta.url, { BASELINE_CHILD: '1', BASELINE_BODY: JSON.stringify(body) }, 'baseline server');
  return { url: `http://127.0.0.1:${server.port}`, pid: server.pid, stop: server.stop };
}
