// The floor of download-256mib: one Node process between the client and S3, doing nothing but
// piping an S3 GET (the minio client) into the HTTP response. The design puts two Node processes
// there (files service and gateway, with gRPC between them); when even one bare hop stays under
// the target on this machine, no implementation of the design reaches it here.
// Prints {"msg":"listening","port":N} (IPC) when it serves.
import http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { forkServer } from './child-server.mjs';

if (process.env.RELAY_CHILD === '1') {
  const { s3Client } = await import('./s3.mjs');
  const client = s3Client(JSON.parse(process.env.RELAY_S3 ?? '{}'));
  const bucket = process.env.RELAY_BUCKET;
  const server = http.createServer(async (req, res) => {
    try {
      const key = new URL(req.url ?? '/', 'http://relay').searchParams.get('key') ?? '';
      const stat = await client.statObject(bucket, key);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': stat.size });
      await pipeline(await client.getObject(bucket, key), res);
    } catch {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    }
  });
  server.listen(0, '127.0.0.1', () => process.send?.({ msg: 'listening', port: server.address().port }));
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

/** Starts the relay for `bucket` on the S3 endpoint `s3`; GET <url>/?key=… streams that object. */
export async function startRelayServer(s3, bucket) {
  const server = await forkServer(import.meta.url, { RELAY_CHILD: '1', RELAY_S3: JSON.stringify(s3), RELAY_BUCKET: bucket }, 'relay server');
  return { url: `http://127.0.0.1:${server.port}`, pid: server.pid, stop: server.stop };
}
