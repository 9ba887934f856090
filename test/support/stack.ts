import { randomBytes } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { inject } from 'vitest';
import { durableName, STREAM_NAME } from '@workspace/platform';
import { consumerGroup as automationsGroup } from '../../services/automations/src/config.js';
import { consumerGroup } from '../../services/files/src/config.js';
import type { ProcessInfo, SharedStackInfo } from './provided-context.js';
import { launchStack, mintToken, newUserId, spawnService, type InfraUrls, type SpawnedService, type StackService } from '@workspace/testkit';

/**
 * A stack as tests use it without owning its processes: the shared stack of a test project
 * (sharedStack) is this. Suites that read logs, kill, restart or need their own settings start
 * a Stack of their own.
 */
export type { ProcessInfo, SharedStackInfo };

export interface SharedStack {
  /** The first gateway replica. */
  url: string;
  secret: string;
  /** Every process by name: `projects` is the first replica, `projects#2` the second in the scaled topology. */
  services: Record<string, ProcessInfo>;
  /** Prometheus text of every replica of a service, concatenated. */
  metricsOf(service: string): Promise<string>;
  /** A token for `sub` (a fresh user when omitted). */
  token(sub?: string): Promise<string>;
  /** Another gateway on the same services, with `env` on top of the stack's gateway env; `logs` are its log lines so far. */
  extraGateway(env: Record<string, string>): Promise<{ url: string; logs: Record<string, unknown>[]; stop(): Promise<unknown> }>;
  /** A fresh user with a token, and a fetch that takes turns over the gateway replicas. */
  user(): Promise<ApiUser>;
}

export interface Stack extends SharedStack {
  /** Replace an entry after restarting it. */
  services: Record<string, SpawnedService>;
  /** Log lines of every replica of a service. */
  logsOf(service: string): Record<string, unknown>[];
  /** What every replica of a service wrote to stderr (Node's warnings, e.g. MaxListenersExceededWarning). */
  stderrOf(service: string): string;
  stop(): Promise<void>;
}

export interface ApiUser {
  sub: string;
  token: string;
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON of any route
  text: string;
}

export async function request(url: string, init: RequestInit): Promise<ApiResponse> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/**
 * Deletes the durable consumers of the consumer `groups`, so that stacks leave none behind on a
 * NATS that outlives them (each would otherwise be kept, and matched against every event, for
 * good). Best effort: a NATS already gone (a suite's private one) is skipped.
 */
export async function dropDurables(natsUrl: string, groups: string[]): Promise<void> {
  const prefixes = groups.map((group) => durableName(group, ''));
  const nc = await connect({ servers: natsUrl.split(','), timeout: 2_000 }).catch(() => undefined);
  if (!nc) return;
  try {
    const names: string[] = [];
    for (let offset = 0; ; ) {
      const reply = (await nc.request(`$JS.API.CONSUMER.NAMES.${STREAM_NAME}`, JSON.stringify({ offset }), { timeout: 2_000 })).json<{ consumers?: string[] | null; total?: number }>();
      const page = reply.consumers ?? [];
      names.push(...page);
      offset += page.length;
      if (page.length === 0 || offset >= (reply.total ?? 0)) break;
    }
    const ours = names.filter((n) => prefixes.some((p) => n.startsWith(p)));
    await Promise.all(ours.map((n) => nc.request(`$JS.API.CONSUMER.DELETE.${STREAM_NAME}.${n}`, '', { timeout: 2_000 }).catch(() => undefined)));
  } catch {
    // Nothing to clean where the stream or the server is gone.
  } finally {
    await nc.close();
  }
}

/**
 * Starts every service and the gateway as real processes on random ports, against the
 * backends found by the global setup (or `options.infra`): one replica of each, or two in the
 * scaled topology (Redis Cluster, NATS cluster), where every request of a user takes turns over
 * the gateways.
 */
export async function startStack(
  options: { gatewayEnv?: Record<string, string>; filesEnv?: Record<string, string>; webhooksEnv?: Record<string, string>; env?: Record<string, string>; infra?: InfraUrls } = {},
): Promise<Stack> {
  const infra = options.infra ?? inject('infra');
  const secret = randomBytes(24).toString('base64url');
  const launched = await launchStack({
    infra,
    secret,
    replicas: infra.topology === 'scaled' ? 2 : 1,
    ...(options.env && { env: options.env }),
    envOf: { ...(options.gatewayEnv && { gateway: options.gatewayEnv }), ...(options.filesEnv && { files: options.filesEnv }), ...(options.webhooksEnv && { webhooks: options.webhooksEnv }) },
  });
  const services = processesByName(launched.replicas);
  const replicasOf = (service: string) => replicasIn(services, service);
  return {
    ...usingStack({ gateways: launched.gateways, secret, envOf: launched.envOf }, services),
    services,
    logsOf: (service) => replicasOf(service).flatMap((s) => s.logs),
    stderrOf: (service) => replicasOf(service).map((s) => s.stderr.join('')).join(''),
    stop: async () => {
      // Entries may have been replaced by restarts: stop what is there now, gateways first.
      const all = Object.entries(services);
      await Promise.all(all.filter(([k]) => k.startsWith('gateway')).map(([, s]) => s.stop()));
      await Promise.all(all.map(([, s]) => s.stop()));
      await dropStackDurables(infra.natsUrl, launched.envOf);
    },
  };
}

/** `files`, `files#2`, … for the replicas of each service. */
function processesByName<T>(replicas: Record<string, T[]>): Record<string, T> {
  const byName: Record<string, T> = {};
  for (const [name, group] of Object.entries(replicas)) group.forEach((s, i) => (byName[i === 0 ? name : `${name}#${i + 1}`] = s));
  return byName;
}

function replicasIn<T>(services: Record<string, T>, service: string): T[] {
  return Object.entries(services).filter(([key]) => key === service || key.startsWith(`${service}#`)).map(([, s]) => s);
}

/** The consumer groups named after a stack's bucket, due index and webhook namespace are its alone. */
function dropStackDurables(natsUrl: string, envOf: Record<StackService, Record<string, string>>): Promise<void> {
  return dropDurables(natsUrl, [consumerGroup(envOf.files.S3_BUCKET!), automationsGroup(envOf.automations.DUE_INDEX_NAMESPACE!), envOf.webhooks.WEBHOOK_NAMESPACE!]);
}

/** What a test needs to use a running stack: its gateways, its secret and its processes' settings. */
type StackAddress = Omit<SharedStackInfo, 'services'>;

/** Everything a test does through a stack's front door, whoever owns its processes. */
function usingStack(address: StackAddress, services: Record<string, ProcessInfo>): Omit<SharedStack, 'services'> {
  const { gateways, secret, envOf } = address;
  let turn = 0;
  const token = (sub = newUserId()) => mintToken({ secret, sub, issuer: envOf.gateway.AUTH_ISSUER, audience: envOf.gateway.AUTH_AUDIENCE });
  return {
    url: gateways[0]!,
    secret,
    metricsOf: async (service) => (await Promise.all(replicasIn(services, service).map(async (s) => (await request(`http://127.0.0.1:${s.metricsPort}/metrics`, {})).text))).join('\n'),
    token,
    extraGateway: async (env) => {
      const gateway = await spawnService('gateway', services.gateway!.entry, { ...envOf.gateway, ...env });
      return { url: `http://127.0.0.1:${gateway.port}`, logs: gateway.logs, stop: () => gateway.stop() };
    },
    user: async () => {
      const sub = newUserId();
      const bearer = await token(sub);
      return {
        sub,
        token: bearer,
        request: (method, path, body, headers = {}) =>
          request(`${gateways[turn++ % gateways.length]}${path}`, {
            method,
            headers: {
              authorization: `Bearer ${bearer}`,
              ...(body === undefined ? {} : { 'content-type': 'application/json' }),
              ...headers,
            },
            body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
          }),
      };
    },
  };
}

/**
 * Starts the stack a whole test project shares (one replica of each process, two in the scaled
 * topology), for the global setup. Its processes keep only their newest log lines: nobody reads
 * them, and they serve every suite of the run.
 */
export async function launchSharedStack(infra: InfraUrls): Promise<{ info: SharedStackInfo; stop(): Promise<void> }> {
  const secret = randomBytes(24).toString('base64url');
  const launched = await launchStack({ infra, secret, replicas: infra.topology === 'scaled' ? 2 : 1, maxLogLines: 1_000 });
  const services = processesByName(launched.replicas);
  const info: SharedStackInfo = {
    gateways: launched.gateways,
    secret,
    envOf: launched.envOf,
    services: Object.fromEntries(Object.entries(services).map(([key, s]) => [key, { name: s.name, port: s.port, metricsPort: s.metricsPort, entry: s.entry, env: s.env }])),
  };
  return {
    info,
    stop: async () => {
      await launched.stop();
      await dropStackDurables(infra.natsUrl, launched.envOf);
    },
  };
}

/**
 * The stack every suite of this test project shares (started once by the global setup): for
 * suites that need default settings and neither read logs nor stop processes. Each test works
 * as its own fresh users, so suites running at once on it never see each other's data.
 */
export function sharedStack(): SharedStack {
  const info = inject('sharedStack');
  if (!info) throw new Error('this test project starts no shared stack (only the e2e projects do): start one with startStack()');
  return { ...usingStack(info, info.services), services: info.services };
}
