import { randomBytes } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { inject } from 'vitest';
import { durableName, STREAM_NAME } from '@workspace/platform';
import { consumerGroup } from '../../services/files/src/config.js';
import { launchStack, mintToken, newUserId, spawnService, type InfraUrls, type SpawnedService } from '@workspace/testkit';

export interface Stack {
  /** The first gateway replica. */
  url: string;
  secret: string;
  /**
   * Every process by name: `projects` is the first replica, `projects#2` the second in the scaled
   * topology. Replace an entry after restarting it.
   */
  services: Record<string, SpawnedService>;
  /** Log lines of every replica of a service. */
  logsOf(service: string): Record<string, unknown>[];
  /** What every replica of a service wrote to stderr (Node's warnings, e.g. MaxListenersExceededWarning). */
  stderrOf(service: string): string;
  /** Prometheus text of every replica of a service, concatenated. */
  metricsOf(service: string): Promise<string>;
  /** A token for `sub` (a fresh user when omitted). */
  token(sub?: string): Promise<string>;
  /** Another gateway on the same services, with `env` on top of the stack's gateway env; `logs` are its log lines so far. */
  extraGateway(env: Record<string, string>): Promise<{ url: string; logs: Record<string, unknown>[]; stop(): Promise<unknown> }>;
  /** A fresh user with a token, and a fetch that takes turns over the gateway replicas. */
  user(): Promise<ApiUser>;
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
  const services: Record<string, SpawnedService> = {};
  for (const [name, group] of Object.entries(launched.replicas)) group.forEach((s, i) => (services[i === 0 ? name : `${name}#${i + 1}`] = s));
  const replicasOf = (service: string) => Object.entries(services).filter(([key]) => key === service || key.startsWith(`${service}#`)).map(([, s]) => s);
  const gateways = launched.gateways;
  let turn = 0;
  const token = (sub = newUserId()) => mintToken({ secret, sub, issuer: options.gatewayEnv?.AUTH_ISSUER, audience: options.gatewayEnv?.AUTH_AUDIENCE });
  return {
    url: gateways[0]!,
    secret,
    services,
    logsOf: (service) => replicasOf(service).flatMap((s) => s.logs),
    stderrOf: (service) => replicasOf(service).map((s) => s.stderr.join('')).join(''),
    metricsOf: async (service) => (await Promise.all(replicasOf(service).map(async (s) => (await request(`http://127.0.0.1:${s.metricsPort}/metrics`, {})).text))).join('\n'),
    token,
    extraGateway: async (env) => {
      const gateway = await spawnService('gateway', services.gateway!.entry, { ...launched.envOf.gateway, ...env });
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
    stop: async () => {
      // Entries may have been replaced by restarts: stop what is there now, gateways first.
      const all = Object.entries(services);
      await Promise.all(all.filter(([k]) => k.startsWith('gateway')).map(([, s]) => s.stop()));
      await Promise.all(all.map(([, s]) => s.stop()));
      // The consumer groups named after this stack's bucket and webhook namespace are its alone.
      await dropDurables(infra.natsUrl, [consumerGroup(launched.envOf.files.S3_BUCKET!), launched.envOf.webhooks.WEBHOOK_NAMESPACE!]);
    },
  };
}
