import type { ServiceDefinition } from '@grpc/grpc-js';
import type { CallContext, OutgoingContext } from './context.js';

type Req<M> = M extends { requestDeserialize: (bytes: Buffer) => infer R } ? R : never;
type Res<M> = M extends { responseDeserialize: (bytes: Buffer) => infer R } ? R : never;

/** The async handler a service writes for one method, by streaming kind. */
export type Handler<M> = M extends { requestStream: true; responseStream: false }
  ? (requests: AsyncIterable<Req<M>>, ctx: CallContext) => Promise<Res<M>>
  : M extends { requestStream: false; responseStream: true }
    ? (request: Req<M>, ctx: CallContext) => AsyncIterable<Res<M>>
    : M extends { requestStream: false; responseStream: false }
      ? (request: Req<M>, ctx: CallContext) => Promise<Res<M>>
      : never;

export type AsyncService<S extends ServiceDefinition> = { [K in keyof S]: Handler<S[K]> };

/** The promise-based method a client calls, by streaming kind. */
export type ClientMethod<M> = M extends { requestStream: true; responseStream: false }
  ? (requests: AsyncIterable<Req<M>>, ctx?: OutgoingContext) => Promise<Res<M>>
  : M extends { requestStream: false; responseStream: true }
    ? (request: Req<M>, ctx?: OutgoingContext) => AsyncIterable<Res<M>>
    : M extends { requestStream: false; responseStream: false }
      ? (request: Req<M>, ctx?: OutgoingContext) => Promise<Res<M>>
      : never;

export type ServiceClient<S extends ServiceDefinition> = { [K in keyof S]: ClientMethod<S[K]> };
