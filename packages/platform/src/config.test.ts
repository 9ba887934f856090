import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, env, loadConfig } from './config.js';

const schema = z.object({ PORT: env.port(8080), REDIS_URL: z.string().url(), DEBUG: env.bool(false), LIMIT: env.positiveInt(5) });

describe('config', () => {
  it('config — defaults apply and values are coerced', () => {
    expect(loadConfig(schema, { REDIS_URL: 'redis://h:1', DEBUG: '1' })).toEqual({ PORT: 8080, REDIS_URL: 'redis://h:1', DEBUG: true, LIMIT: 5 });
  });

  it('config — every problem is reported at once', () => {
    let caught: unknown;
    try {
      loadConfig(schema, { PORT: '99999', DEBUG: 'maybe', LIMIT: '-1' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const problems = (caught as ConfigError).problems.join('\n');
    for (const name of ['PORT', 'REDIS_URL', 'DEBUG', 'LIMIT']) expect(problems).toContain(name);
  });
});
