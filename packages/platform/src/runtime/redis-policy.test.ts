import { describe, expect, it } from 'vitest';
import { redisVersionProblem } from './redis-policy.js';

describe('redisVersionProblem', () => {
  it('redis — 7.0 and later run the scripts; 6.x is refused with the reason; no version line says nothing', () => {
    expect(redisVersionProblem('# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n')).toBeUndefined();
    expect(redisVersionProblem('# Server\r\nredis_version:7.2.4\r\n')).toBeUndefined();
    expect(redisVersionProblem('# Server\r\nredis_version:8.0.0\r\n')).toBeUndefined();
    expect(redisVersionProblem('# Server\r\nredis_version:6.2.14\r\n')).toMatch(/^Redis 6\.2 is older than 7\.0/);
    expect(redisVersionProblem('')).toBeUndefined();
  });
});
