import createClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch';
import type { paths } from './gen/schema.js';

export type { components, operations, paths } from './gen/schema.js';

/** A client of every route of the Workspace API, typed from its OpenAPI document. */
export type WorkspaceClient = Client<paths>;

export interface WorkspaceClientOptions {
  /** The gateway, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** The bearer token (a JWT), or a function asked before each request (to refresh one). */
  token: string | (() => string | Promise<string>);
  /** Another fetch (a test double, a proxy agent); the global one by default. */
  fetch?: ClientOptions['fetch'];
}

/**
 * `createWorkspaceClient({ baseUrl, token })`: `client.GET('/v1/agents', { params: { query: { page: 1 } } })`
 * answers `{ data, error, response }` with `data` typed by the route's success answer and `error`
 * by the error envelope.
 */
export function createWorkspaceClient(options: WorkspaceClientOptions): WorkspaceClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), ...(options.fetch && { fetch: options.fetch }) });
  const { token } = options;
  const auth: Middleware = {
    async onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${typeof token === 'string' ? token : await token()}`);
      return request;
    },
  };
  client.use(auth);
  return client;
}

/**
 * The `bodySerializer` of multipart routes (the upload): text fields first, then files, as the
 * gateway reads them (`path` and `onConflict` must come before `file`). A `File` keeps its name.
 */
export function multipart(body: Record<string, string | Blob | undefined>): FormData {
  const form = new FormData();
  const entries = Object.entries(body).filter((entry): entry is [string, string | Blob] => entry[1] !== undefined);
  for (const [name, value] of entries) if (typeof value === 'string') form.append(name, value);
  for (const [name, value] of entries) if (typeof value !== 'string') form.append(name, value);
  return form;
}
