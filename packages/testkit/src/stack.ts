import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { InfraUrls } from './infra.js';
import { spawnService, type SpawnedService } from './process.js';

/** The processes of the stack; each is told the addresses of those before it that it calls. */
export const STACK_SERVICES = ['files', 'projects', 'agents', 'automations', 'webhooks', 'gateway'] as const;
export type StackService = (typeof STACK_SERVICES)[number];

export interface LaunchOptions {
  infra: InfraUrls;
  /** Replicas of every process (2 in the scaled topology). */
  replicas?: number;
  /** HS256 secret the gateways verify tokens with. */
  secret: string;
  /** Environment for every process, under the stack's own settings. */
  env?: Record<string, string>;
  /** Environment per process, over everything else. */
  envOf?: Partial<Record<StackService, Record<string, string>>>;
  /** Log lines kept per process (the newest); unset: all (see SpawnOptions). */
  maxLogLines?: number;
}

export interface LaunchedStack {
  /** Replicas of each process, in start order. */
  replicas: Record<StackService, SpawnedService[]>;
  /** Base URLs of the gateway replicas. */
  gateways: string[];
  /** The environment each process was started with (a new replica can reuse it). */
  envOf: Record<StackService, Record<string, string>>;
  stop(): Promise<void>;
}

/** `count` ports free on loopback now, all different (held together while they are picked), for processes about to bind them. */
async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer().listen(0, '127.0.0.1'));
  await Promise.all(servers.map((s) => (s.listening ? undefined : once(s, 'listening'))));
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

const entry = (service: StackService) => fileURLToPath(new URL(`../../../services/${service}/dist/main.js`, import.meta.url));

/**
 * Suites send many requests fast and the bench seeds 10,000 Agents of one user: the stack's
 * limits are generous unless a suite sets its own (`env` or `envOf`), as test/limits.e2e.test.ts does.
 */
const GENEROUS_LIMITS = {
  gateway: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000', MAX_CONCURRENT_UPLOADS: '1000', MAX_SEARCHES_PER_USER: '1000' },
  agents: { MAX_AGENTS: '1000000' },
};

/** The entries of `env` named in `names`. */
function pick(env: Record<string, string> | undefined, names: string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((n) => (env?.[n] === undefined ? [] : [[n, env[n]]])));
}

/** One key per stack seals webhook secrets at rest, as every replica of a deployment shares one. */
const TRIGGER_SECRET_KEY = 'e2e0'.repeat(16);
const WEBHOOK_SECRET_KEY = 'e2e1'.repeat(16);

/**
 * Starts every built service and the gateway as real processes on random loopback ports,
 * `replicas` of each, against `infra`. Clients reach a group of replicas through one
 * `ipv4:a,b` address and round-robin over them, as they do over a headless Service. Ports are
 * picked first, so every process starts at once (gRPC clients connect when first called); a
 * launch that loses a port to another process in the meantime starts again on new ones.
 */
export async function launchStack(options: LaunchOptions): Promise<LaunchedStack> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await launchOnce(options);
    } catch (err) {
      // A port taken between picking it and binding it (rare): every process starts again on new ones.
      if (attempt === 3 || !/EADDRINUSE|No address added/.test(String(err))) throw err;
    }
  }
}

async function launchOnce(options: LaunchOptions): Promise<LaunchedStack> {
  const { infra } = options;
  const count = options.replicas ?? 1;
  const replicas = {} as Record<StackService, SpawnedService[]>;
  const envOf = {} as Record<StackService, Record<string, string>>;
  const picked = await freePorts(STACK_SERVICES.length * count);
  const ports = Object.fromEntries(STACK_SERVICES.map((service, i) => [service, picked.slice(i * count, (i + 1) * count)])) as Record<StackService, number[]>;
  const addr = (service: StackService) => {
    const list = ports[service].map((port) => `127.0.0.1:${port}`);
    return list.length === 1 ? list[0]! : `ipv4:${list.join(',')}`;
  };
  const common = {
    // Any free port for a replica started later from `envOf`; the launch gives each its own below.
    GRPC_PORT: '0',
    GRPC_HOST: '127.0.0.1',
    PORT: '0',
    HOST: '127.0.0.1',
    REDIS_URL: infra.redisUrl,
    REDIS_CLUSTER: String(infra.redisCluster ?? false),
    NATS_URL: infra.natsUrl,
    NATS_STREAM_REPLICAS: String(infra.natsReplicas ?? 1),
  };
  const dueNamespace = options.env?.DUE_INDEX_NAMESPACE ?? `test-${randomBytes(8).toString('hex')}`;
  // A setting of GENEROUS_LIMITS given in `env` wins over the generous default.
  const generous = (service: keyof typeof GENEROUS_LIMITS) => ({ ...GENEROUS_LIMITS[service], ...pick(options.env, Object.keys(GENEROUS_LIMITS[service])) });
  const own = (service: StackService): Record<string, string> => {
    switch (service) {
      case 'files':
        return {
          S3_ENDPOINT: infra.s3.endpoint,
          S3_ACCESS_KEY: infra.s3.accessKey,
          S3_SECRET_KEY: infra.s3.secretKey,
          S3_REGION: infra.s3.region,
          S3_BUCKET: `test-${randomBytes(8).toString('hex')}`,
        };
      case 'projects':
        return { FILES_ADDR: addr('files') };
      case 'agents':
        return { ...generous('agents'), PROJECTS_ADDR: addr('projects'), FILES_ADDR: addr('files') };
      case 'automations':
        // Its own due index, as it has its own webhook namespace: stacks on one Redis never run each other's schedules.
        return { AGENTS_ADDR: addr('agents'), TRIGGER_SECRET_KEY, DUE_INDEX_NAMESPACE: dueNamespace };
      case 'webhooks':
        // Receivers in tests are local servers; each stack has its own queue and durables, so
        // stacks with other settings on the same Redis and NATS never take its deliveries.
        return { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1,localhost', WEBHOOK_SECRET_KEY, WEBHOOK_NAMESPACE: `test-${randomBytes(8).toString('hex')}`, WEBHOOK_CONSUMER_INACTIVE_MS: '600000' };
      case 'gateway':
        return {
          ...generous('gateway'),
          AUTH_JWT_SECRET: options.secret,
          // Every replica verifies the temporary links any of them signed.
          LINK_SIGNING_KEYS: `test:${createHash('sha256').update(`links:${options.secret}`).digest('hex')}`,
          PROJECTS_ADDR: addr('projects'),
          FILES_ADDR: addr('files'),
          AGENTS_ADDR: addr('agents'),
          AUTOMATIONS_ADDR: addr('automations'),
          WEBHOOKS_ADDR: addr('webhooks'),
        };
    }
  };
  const stop = async () => {
    // The gateways first, so nothing new comes in while the services drain.
    for (const service of [...STACK_SERVICES].reverse()) await Promise.all((replicas[service] ?? []).map((s) => s.stop()));
  };
  const start = (service: StackService, port: number) => spawnService(service, entry(service), { ...envOf[service], GRPC_PORT: String(port), PORT: String(port) }, { ...(options.maxLogLines !== undefined && { maxLogLines: options.maxLogLines }) });
  try {
    for (const service of STACK_SERVICES) envOf[service] = { ...options.env, ...common, ...own(service), ...options.envOf?.[service] };
    const started = await Promise.all(
      STACK_SERVICES.map(async (service) => {
        const settled = await Promise.allSettled(ports[service].map((port) => start(service, port)));
        // Replicas that did start are kept, so that a failure stops them too.
        replicas[service] = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
        return settled.find((s) => s.status === 'rejected');
      }),
    );
    const failed = started.find((s) => s !== undefined);
    if (failed) throw failed.reason;
  } catch (err) {
    await stop();
    throw err;
  }
  return { replicas, gateways: replicas.gateway.map((g) => `http://127.0.0.1:${g.port}`), envOf, stop };
}
