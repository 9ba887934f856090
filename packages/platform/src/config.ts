import { z } from 'zod';

/** Thrown when the environment does not satisfy a service's schema; lists every problem. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/**
 * Parses the environment against a zod schema once, at start, and reports every problem at
 * once (not the first only), so a misconfigured deployment is fixed in one round.
 */
export function loadConfig<S extends z.ZodType>(schema: S, env: Record<string, string | undefined> = process.env): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`));
}

/** loadConfig for a process entry point: prints every problem and exits 2 instead of throwing. */
export function loadConfigOrExit<S extends z.ZodType>(schema: S, env: Record<string, string | undefined> = process.env): z.output<S> {
  try {
    return loadConfig(schema, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
}

/** Reusable pieces of environment schemas. */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  positiveInt: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  url: (fallback: string) => z.string().url().default(fallback),
  /** OTLP/HTTP collector base URL; tracing is off when unset. */
  otlpEndpoint: () =>
    z
      .string()
      .optional()
      .transform((v) => (v?.trim() ? v.trim() : undefined))
      .pipe(z.string().url().optional()),
  /** host:port of another service's gRPC endpoint; `dns:///name:port` also works. */
  address: (fallback: string) => z.string().min(3).default(fallback),
  /** 32 bytes as 64 hex digits or base64 / base64url (a sealing key); empty or unset → undefined. */
  secretKey: () =>
    z
      .string()
      .optional()
      .transform((v, ctx) => {
        const value = v?.trim();
        if (!value) return undefined;
        const key = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
        if (key.length !== 32) ctx.addIssue({ code: 'custom', message: 'must be 32 bytes as 64 hex digits or base64' });
        return key;
      }),
  bool: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0'])
      .default(fallback ? 'true' : 'false')
      .transform((v) => v === 'true' || v === '1'),
};
