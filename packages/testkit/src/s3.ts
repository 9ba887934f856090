import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnService } from './process.js';

/** How to reach an S3-compatible store (the files service's S3_* settings). */
export interface S3Endpoint {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  region: string;
}

export interface S3Handle {
  s3: S3Endpoint;
  stop(): Promise<void>;
}

/** s3rver's fixed credentials (it checks signatures against them). */
export const S3RVER_KEYS = { accessKey: 'S3RVER', secretKey: 'S3RVER' } as const;

/** The store named by S3_ENDPOINT (with S3_ACCESS_KEY, S3_SECRET_KEY, S3_REGION), if any. */
export function s3FromEnv(env: Record<string, string | undefined>): S3Endpoint | undefined {
  if (!env.S3_ENDPOINT) return undefined;
  return {
    endpoint: env.S3_ENDPOINT,
    accessKey: env.S3_ACCESS_KEY ?? 'minioadmin',
    secretKey: env.S3_SECRET_KEY ?? 'minioadmin',
    region: env.S3_REGION ?? 'us-east-1',
  };
}

/** MinIO in a container (testcontainers); call only when a container runtime answers. */
export async function startMinioContainer(): Promise<S3Handle> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const keys = { accessKey: 'minioadmin', secretKey: 'minioadmin' };
  const minio = await new GenericContainer('minio/minio:latest')
    .withCommand(['server', '/data'])
    .withEnvironment({ MINIO_ROOT_USER: keys.accessKey, MINIO_ROOT_PASSWORD: keys.secretKey })
    .withExposedPorts(9000)
    .withWaitStrategy(Wait.forHttp('/minio/health/ready', 9000))
    .start();
  return {
    s3: { endpoint: `http://${minio.getHost()}:${minio.getMappedPort(9000)}`, region: 'us-east-1', ...keys },
    stop: async () => void (await minio.stop()),
  };
}

/** The launcher shared with `npm start` (scripts/s3rver.mjs at the repository root). */
const LAUNCHER = fileURLToPath(new URL('../../../scripts/s3rver.mjs', import.meta.url));

/**
 * s3rver, the embedded S3-compatible server, as a child process on a random port over a fresh
 * temporary directory that `stop` removes. A child rather than in-process: s3rver needs
 * OpenSSL's legacy provider (see the launcher), a process-wide setting.
 */
export async function startS3rver(): Promise<S3Handle> {
  const directory = await mkdtemp(join(tmpdir(), 's3rver-'));
  const server = await spawnService('s3rver', LAUNCHER, { NODE_OPTIONS: '--openssl-legacy-provider', S3RVER_DIRECTORY: directory });
  return {
    s3: { endpoint: `http://127.0.0.1:${server.port}`, region: 'us-east-1', ...S3RVER_KEYS },
    stop: async () => {
      await server.stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
