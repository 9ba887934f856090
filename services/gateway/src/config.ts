import { env, processConfig } from '@workspace/platform';
import { z } from 'zod';
import { parseLinkKeys } from './features/links/link-signer.js';

const optional = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v));

export const configSchema = processConfig({ metrics: 9464 })
  .extend({
    HOST: z.string().default('0.0.0.0'),
    PORT: env.port(8080),
    AUTH_JWKS_URL: optional.pipe(z.string().url().optional()),
    /**
     * How long a fetched JWKS is trusted (a key removed at the provider stops verifying within
     * this); unset: the provider's Cache-Control max-age, clamped to 60 s–10 min (5 min without one).
     */
    AUTH_JWKS_CACHE_MAX_AGE_MS: optional.transform((v) => (v === undefined ? undefined : Number(v))).pipe(z.number().int().positive().optional()),
    /** The least time between two JWKS fetches made for a token naming a key the set lacks. */
    AUTH_JWKS_COOLDOWN_MS: z.coerce.number().int().min(0).default(30_000),
    /** PEM (SPKI) public key; `\n` escapes are accepted for one-line environment values. */
    AUTH_PUBLIC_KEY: optional.transform((v) => v?.replace(/\\n/g, '\n')),
    AUTH_JWT_SECRET: optional,
    AUTH_ISSUER: optional,
    AUTH_AUDIENCE: optional,
    PROJECTS_ADDR: env.address('127.0.0.1:50051'),
    AGENTS_ADDR: env.address('127.0.0.1:50053'),
    FILES_ADDR: env.address('127.0.0.1:50052'),
    /** Empty: run without the automations service (no schedule or trigger routes). */
    AUTOMATIONS_ADDR: z
      .string()
      .default('127.0.0.1:50054')
      .transform((v) => v.trim() || undefined),
    /** Empty: run without the webhooks service (no /v1/webhooks routes). */
    WEBHOOKS_ADDR: z
      .string()
      .default('127.0.0.1:50055')
      .transform((v) => v.trim() || undefined),
    GRPC_DEADLINE_MS: env.positiveInt(5_000),
    /** An upload body that sends no byte for this long (while the gateway waits for one) fails (docs/api/files.md#upload). */
    UPLOAD_IDLE_TIMEOUT_MS: env.positiveInt(30_000),
    TRUST_PROXY: env.bool(false),
    /** Redis shared by every gateway replica: rate limits, upload slots, idempotency records. */
    REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
    REDIS_CLUSTER: env.bool(false),
    /** Per user (and per webhook trigger): the steady rate of requests a second (docs/api/conventions.md#rate-limits). */
    RATE_LIMIT_PER_SECOND: env.positiveInt(50),
    /** Per user (and per webhook trigger): how many requests may come at once after a quiet spell. */
    RATE_LIMIT_BURST: env.positiveInt(200),
    /** Uploads of one user in flight at once, across every replica; one more → 429. */
    MAX_CONCURRENT_UPLOADS: env.positiveInt(8),
    /** Content searches (docs/api/files.md#search) of one user running at once, across every replica; one more → 429. */
    MAX_SEARCHES_PER_USER: env.positiveInt(2),
    /** Browser origins allowed to call the API (docs/api/conventions.md#cors), comma-separated; none by default. */
    CORS_ORIGINS: z
      .string()
      .default('')
      .transform((v) => v.split(',').map((o) => o.trim()).filter(Boolean))
      .pipe(z.array(z.string().url())),
    /**
     * Temporary links' HMAC keys, `kid:secret,kid:secret`: the first signs, every one verifies
     * (rotate by putting a new key first; drop the old one a day later). Unset: a random key per
     * process (links then work only on the replica that made them, until it restarts).
     */
    LINK_SIGNING_KEYS: z
      .string()
      .default('')
      .transform(parseLinkKeys)
      .pipe(
        z
          .array(z.object({ kid: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'a key id is 1–32 of A–Z a–z 0–9 _ -'), secret: z.string().min(32, 'a link secret has at least 32 characters') }))
          .refine((keys) => new Set(keys.map((k) => k.kid)).size === keys.length, 'key ids must differ'),
      ),
    /** The largest upload (inclusive), as tus announces it (Tus-Max-Size): the files service's MAX_UPLOAD_BYTES, which it enforces. */
    MAX_UPLOAD_BYTES: env.positiveInt(5 * 1024 ** 3),
    /** How long an unfinished resumable (tus) upload lives (its Upload-Expires); then it and its bytes go. */
    TUS_UPLOAD_EXPIRY_MS: env.positiveInt(24 * 3600_000),
    /** The gateway's public base URL (`https://api.example.com`) for temporary links; unset: the scheme and host each request came to. */
    PUBLIC_URL: optional.pipe(z.string().url().optional()),
    /**
     * The authorization servers the MCP endpoint's protected-resource metadata names
     * (docs/api/mcp.md#authentication), comma-separated URLs; unset: AUTH_ISSUER.
     */
    MCP_AUTHORIZATION_SERVERS: z
      .string()
      .default('')
      .transform((v) => v.split(',').map((o) => o.trim()).filter(Boolean))
      .pipe(z.array(z.string().url())),
    /**
     * An MCP GET stream whose socket takes none of what waits for it for this long is closed
     * (docs/api/mcp.md#subscriptions): the client reconnects and resumes.
     */
    MCP_STREAM_STALL_MS: env.positiveInt(30_000),
    /** How long /readyz reports "not ready" before the server stops taking connections. */
    SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).default(0),
  })
  .refine((c) => c.AUTH_JWKS_URL || c.AUTH_PUBLIC_KEY || c.AUTH_JWT_SECRET, {
    message: 'one of AUTH_JWKS_URL, AUTH_PUBLIC_KEY or AUTH_JWT_SECRET is required',
    path: ['AUTH_JWT_SECRET'],
  });

export type GatewayConfig = z.output<typeof configSchema>;
