import { once } from 'node:events';
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import {
  Server,
  ServerCredentials,
  type Metadata,
  type MethodDefinition,
  type ServerUnaryCall,
  type ServiceDefinition,
  type UntypedHandleCall,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { context, trace, type Context, type Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { extractTraceContext, SpanKind, SpanStatusCode, traceIdOf, tracer, tracingEnabled } from '../tracing.js';
import { AppError, errors, isAppError } from '../errors/app-error.js';
import { toGrpcStatus } from '../errors/grpc-status.js';
import { isRedisUnavailable } from '../redis-errors.js';
import { MD_REQUEST_ID, MD_USER_ID, type CallContext } from './context.js';
import type { AsyncService } from './types.js';

/** Told about every finished call: for metrics. `code` is 'OK' or one of ours. */
export type CallObserver = (method: string, code: string, seconds: number) => void;

type Ctx = CallContext & { started: bigint; method: string; span: Span | undefined; trace: Context | undefined; traceId: string | undefined; done: boolean };

type AnyCall = { metadata: Metadata; on(event: 'cancelled', fn: () => void): unknown; getPath(): string };

function firstString(metadata: Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** The user id of binary metadata, exactly as sent (a leading BOM too): bytes that are not UTF-8 name no user. */
function userOf(metadata: Metadata): string | undefined {
  const value = metadata.get(MD_USER_ID)[0];
  return Buffer.isBuffer(value) && value.length > 0 && isUtf8(value) ? value.toString('utf8') : undefined;
}

/** Runs `fn` in the call's trace context, or as is when tracing is off. */
function inTrace<T>(ctx: Ctx, fn: () => T): T {
  return ctx.trace ? context.with(ctx.trace, fn) : fn();
}

/**
 * A grpc-js server whose services are written as async functions. Errors thrown as AppError
 * travel as their gRPC status with google.rpc.Status details; anything else is logged with
 * its stack and answered as INTERNAL with a generic message.
 */
export class GrpcServer {
  readonly server = new Server({ 'grpc.max_receive_message_length': 8 * 1024 * 1024 });
  readonly #logger: Logger;
  readonly #observe: CallObserver | undefined;

  constructor(logger: Logger, options: { observe?: CallObserver } = {}) {
    this.#logger = logger;
    this.#observe = options.observe;
  }

  add<S extends ServiceDefinition>(definition: S, impl: AsyncService<S>): this {
    const untyped: UntypedServiceImplementation = {};
    for (const [name, method] of Object.entries(definition) as [string, MethodDefinition<unknown, unknown>][]) {
      const handler = (impl as Record<string, (...args: never[]) => unknown>)[name];
      if (!handler) throw new Error(`no handler for ${method.path}`);
      untyped[name] = this.#wrap(method, handler as (...args: unknown[]) => unknown);
    }
    this.server.addService(definition, untyped);
    return this;
  }

  /** Binds host:port (port 0 picks a free one) and resolves with the bound port. */
  async listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, bound) =>
        err ? reject(err) : resolve(bound),
      );
    });
  }

  /** Stops taking calls, lets in-flight calls finish for up to `graceMs`, then cancels the rest. */
  async drain(graceMs: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#logger.warn('in-flight calls did not finish in time; cancelling them');
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  #context(call: AnyCall): Ctx {
    const controller = new AbortController();
    const requestId = firstString(call.metadata, MD_REQUEST_ID) ?? randomUUID();
    const method = call.getPath();
    // With tracing on: continue the caller's trace (traceparent in metadata) with a server span
    // for this call. Off, the API would only hand out no-op spans: skip them.
    let span: Span | undefined;
    let traceCtx: Context | undefined;
    if (tracingEnabled()) {
      const parent = extractTraceContext(call.metadata);
      span = tracer().startSpan(method, { kind: SpanKind.SERVER, attributes: { 'rpc.system': 'grpc', 'rpc.method': method } }, parent);
      traceCtx = trace.setSpan(parent, span);
    }
    const traceId = span && traceIdOf(span);
    const base = this.#logger;
    let logger: Logger | undefined;
    const ctx: Ctx = {
      userId: userOf(call.metadata),
      requestId,
      // Built when a handler first logs: most calls never do.
      get logger() {
        logger ??= base.child(traceId ? { requestId, traceId, method } : { requestId, method });
        return logger;
      },
      signal: controller.signal,
      metadata: call.metadata,
      started: process.hrtime.bigint(),
      method,
      span,
      trace: traceCtx,
      traceId,
      done: false,
    };
    // grpc-js reports every call's stream closing as 'cancelled', finished ones too: only a
    // call still being served is aborted.
    call.on('cancelled', () => {
      if (!ctx.done) controller.abort(new AppError('UNAVAILABLE', 'call cancelled'));
    });
    return ctx;
  }

  /** One log line per call (ids and outcome, never payloads), and the observer. */
  #finish(ctx: Ctx, code: string) {
    ctx.done = true;
    const seconds = Number(process.hrtime.bigint() - ctx.started) / 1e9;
    const line = { requestId: ctx.requestId, ...(ctx.traceId && { traceId: ctx.traceId }), method: ctx.method, code, ms: Math.round(seconds * 10_000) / 10 };
    this.#logger.info(line, 'call');
    this.#observe?.(ctx.method, code, seconds);
    if (!ctx.span) return;
    ctx.span.setAttribute('rpc.workspace.code', code);
    if (code !== 'OK') ctx.span.setStatus({ code: SpanStatusCode.ERROR, message: code });
    ctx.span.end();
  }

  #toStatus(err: unknown, ctx: Ctx) {
    // A store that cannot be reached is the caller's cue to retry, whichever repository met it.
    if (!isAppError(err) && isRedisUnavailable(err)) err = errors.unavailable('Redis', err);
    if (isAppError(err) && err.code !== 'INTERNAL') {
      this.#finish(ctx, err.code);
      return toGrpcStatus(err);
    }
    ctx.logger.error({ err: isAppError(err) && err.cause ? err.cause : err }, 'call failed unexpectedly');
    this.#finish(ctx, 'INTERNAL');
    return toGrpcStatus(errors.internal());
  }

  #ok(ctx: Ctx) {
    this.#finish(ctx, 'OK');
  }

  #wrap(method: MethodDefinition<unknown, unknown>, handler: (...args: unknown[]) => unknown): UntypedHandleCall {
    if (method.requestStream && !method.responseStream) {
      return ((call: AnyCall & AsyncIterable<unknown>, callback: (err: unknown, res?: unknown) => void) => {
        const ctx = this.#context(call);
        (inTrace(ctx, () => handler(call, ctx)) as Promise<unknown>).then(
          (res) => (this.#ok(ctx), callback(null, res)),
          (err: unknown) => callback(this.#toStatus(err, ctx)),
        );
      }) as UntypedHandleCall;
    }
    if (!method.requestStream && method.responseStream) {
      return ((call: ServerUnaryCall<unknown, unknown> & NodeJS.WritableStream & { write(m: unknown): boolean }) => {
        const ctx = this.#context(call);
        // The whole loop runs in the call's trace context: generator bodies run at iteration.
        void inTrace(ctx, async () => {
          try {
            for await (const message of handler(call.request, ctx) as AsyncIterable<unknown>) {
              if (ctx.signal.aborted) return this.#finish(ctx, 'CANCELLED');
              if (!call.write(message)) await once(call, 'drain', { signal: ctx.signal });
            }
            call.end();
            this.#ok(ctx);
          } catch (err) {
            if (ctx.signal.aborted) this.#finish(ctx, 'CANCELLED');
            else call.emit('error', this.#toStatus(err, ctx));
          }
        });
      }) as UntypedHandleCall;
    }
    if (method.requestStream && method.responseStream) throw new Error(`bidi streaming is not supported: ${method.path}`);
    return ((call: ServerUnaryCall<unknown, unknown>, callback: (err: unknown, res?: unknown) => void) => {
      const ctx = this.#context(call);
      let result: Promise<unknown>;
      try {
        result = inTrace(ctx, () => handler(call.request, ctx)) as Promise<unknown>;
      } catch (err) {
        result = Promise.reject(err);
      }
      result.then(
        (res) => (this.#ok(ctx), callback(null, res)),
        (err: unknown) => callback(this.#toStatus(err, ctx)),
      );
    }) as UntypedHandleCall;
  }
}
