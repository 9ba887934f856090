import {
  Client,
  Metadata,
  credentials,
  type ClientReadableStream,
  type ClientWritableStream,
  type MethodDefinition,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import { once } from 'node:events';
import { fromGrpcError } from '../errors/grpc-status.js';
import { injectTraceContext } from '../tracing.js';
import { MD_REQUEST_ID, MD_USER_ID, type OutgoingContext } from './context.js';
import type { ServiceClient } from './types.js';

export interface ClientOptions<K extends string = string> {
  /** Used in error messages ("the projects service is unavailable"). */
  serviceName: string;
  /** host:port, or dns:///name:port to balance over every address of a headless Service. */
  address: string;
  /** Default deadline of every call; no call is ever made without one. */
  deadlineMs: number;
  /**
   * Methods safe to repeat (reads, idempotent writes): retried on UNAVAILABLE, e.g. when the
   * replica that took the call is shutting down. Others are never retried by the client.
   */
  idempotent?: readonly K[];
}

const RETRY_POLICY = {
  maxAttempts: 3,
  initialBackoff: '0.05s',
  maxBackoff: '0.5s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};

/**
 * Channel options: round-robin over all resolved addresses (`dns:///name:port` or
 * `ipv4:a:p1,b:p2`), keepalive to notice dead peers, retries for the idempotent methods only.
 */
function channelOptions(paths: string[]) {
  const name = paths.map((path) => {
    const [, service = '', method = ''] = path.split('/');
    return { service, method };
  });
  const methodConfig = name.length > 0 ? [{ name, retryPolicy: RETRY_POLICY }] : [];
  return {
    'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }], methodConfig }),
    'grpc.enable_retries': 1,
    // A restarted replica is found again within a second or two, not after minutes of backoff.
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 2_000,
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 10_000,
    'grpc.max_receive_message_length': 8 * 1024 * 1024,
    // HTTP/2 flow control: how much a server may send on one call before the client asks for
    // more. The 64 KiB default stalls a streamed download on every window update; this bounds
    // what one download can hold here while its HTTP client reads slowly.
    'grpc-node.flow_control_window': 1024 * 1024,
  };
}

function metadataOf(ctx: OutgoingContext): Metadata {
  const md = new Metadata();
  if (ctx.requestId) md.set(MD_REQUEST_ID, ctx.requestId);
  if (ctx.userId) md.set(MD_USER_ID, Buffer.from(ctx.userId, 'utf8'));
  injectTraceContext(md);
  return md;
}

type Cancellable = { cancel(): void };

const NOTHING_TO_UNLINK: () => void = () => undefined;

/**
 * Cancels `call` when `signal` aborts, until the returned function is called, which every call
 * does as it ends. One signal (an HTTP request's) serves many calls one after another, e.g. an
 * upload's reservation per part: a listener kept past its call would pile up on it.
 */
function linkSignal(call: Cancellable, signal: AbortSignal | undefined): () => void {
  if (!signal) return NOTHING_TO_UNLINK;
  if (signal.aborted) {
    call.cancel();
    return NOTHING_TO_UNLINK;
  }
  const cancel = () => call.cancel();
  signal.addEventListener('abort', cancel, { once: true });
  return () => signal.removeEventListener('abort', cancel);
}

/**
 * A promise-based client of one service. Every call has a deadline, carries the user and
 * request id as metadata, and fails with an AppError decoded from the server's status.
 */
export function createClient<S extends ServiceDefinition>(
  definition: S,
  options: ClientOptions<Extract<keyof S, string>>,
): ServiceClient<S> & { close(): void } {
  const idempotentPaths = (options.idempotent ?? []).map((name) => definition[name]!.path);
  const raw = new Client(options.address, credentials.createInsecure(), channelOptions(idempotentPaths));
  const fail = (err: unknown) => fromGrpcError(err, options.serviceName);
  const callOptions = (ctx: OutgoingContext) => ({ deadline: Date.now() + (ctx.deadlineMs ?? options.deadlineMs) });
  const methods: Record<string, unknown> = { close: () => raw.close() };

  for (const [name, m] of Object.entries(definition) as [string, MethodDefinition<unknown, unknown>][]) {
    if (!m.requestStream && !m.responseStream) {
      methods[name] = (request: unknown, ctx: OutgoingContext = {}) =>
        new Promise((resolve, reject) => {
          let ended = false;
          let unlink = NOTHING_TO_UNLINK;
          const call = raw.makeUnaryRequest(m.path, m.requestSerialize, m.responseDeserialize, request, metadataOf(ctx), callOptions(ctx), (err, res) => {
            ended = true;
            unlink();
            if (err) reject(fail(err));
            else resolve(res);
          });
          if (!ended) unlink = linkSignal(call, ctx.signal);
        });
    } else if (!m.requestStream && m.responseStream) {
      methods[name] = (request: unknown, ctx: OutgoingContext = {}) =>
        (async function* () {
          const call: ClientReadableStream<unknown> = raw.makeServerStreamRequest(m.path, m.requestSerialize, m.responseDeserialize, request, metadataOf(ctx), callOptions(ctx));
          const unlink = linkSignal(call, ctx.signal);
          try {
            for await (const message of call) yield message;
          } catch (err) {
            throw fail(err);
          } finally {
            unlink();
            call.cancel();
          }
        })();
    } else if (m.requestStream && !m.responseStream) {
      methods[name] = (requests: AsyncIterable<unknown>, ctx: OutgoingContext = {}) =>
        new Promise((resolve, reject) => {
          let settled = false;
          let unlink = NOTHING_TO_UNLINK;
          // Once the server has answered (an early error, say) no 'drain' may ever come: stop waiting for one.
          const answered = new AbortController();
          const call: ClientWritableStream<unknown> = raw.makeClientStreamRequest(m.path, m.requestSerialize, m.responseDeserialize, metadataOf(ctx), callOptions(ctx), (err, res) => {
            settled = true;
            unlink();
            answered.abort();
            if (err) reject(fail(err));
            else resolve(res);
          });
          if (!settled) unlink = linkSignal(call, ctx.signal);
          void (async () => {
            try {
              for await (const message of requests) {
                if (settled) return;
                if (!call.write(message)) await once(call, 'drain', { signal: answered.signal });
              }
              call.end();
            } catch (err) {
              // The source failed (for example, the HTTP client went away): cancel the call so
              // the server discards what it received; the caller sees the source's error.
              call.cancel();
              if (!settled) {
                settled = true;
                reject(err);
              }
            }
          })();
        });
    }
  }
  return methods as ServiceClient<S> & { close(): void };
}
