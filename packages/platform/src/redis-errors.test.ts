import { ReplyError } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { isRedisUnavailable } from './redis-errors.js';

describe('redis errors', () => {
  it('redis — a full, read-only, busy or loading Redis is unavailable (503), a wrong command is not', () => {
    for (const message of [
      "OOM command not allowed when used memory > 'maxmemory'.",
      "READONLY You can't write against a read only replica.",
      'MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk.',
      'BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.',
      'LOADING Redis is loading the dataset in memory',
      'MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no.',
    ]) {
      expect(isRedisUnavailable(new ReplyError(message)), message).toBe(true);
    }
    expect(isRedisUnavailable(new ReplyError('BUSYGROUP Consumer Group name already exists'))).toBe(false);
    expect(isRedisUnavailable(new ReplyError('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe(false);
    expect(isRedisUnavailable(new Error('ECONNREFUSED 127.0.0.1:6379'))).toBe(true);
  });
});
