import { errors, userTag, type RedisClient } from '@workspace/platform';
import type { RemovedAgents } from '../domain/ports.js';

/** Far longer than any pin can be in flight (a pin only starts while the Agent exists). */
const DEFAULT_TTL_SECONDS = 7 * 24 * 3600;

/**
 * One small key per removed Agent, `files:{u:<tenant>}:removed-agent:<agentId>`, expiring on
 * its own: it only has to outlive the pins that were in flight when the Agent was deleted.
 */
export class RedisRemovedAgents implements RemovedAgents {
  readonly #redis: RedisClient;
  readonly #ttlSeconds: number;

  constructor(redis: RedisClient, options: { ttlSeconds?: number } = {}) {
    this.#redis = redis;
    this.#ttlSeconds = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  }

  #key(userId: string, agentId: string): string {
    return `files:${userTag(userId)}:removed-agent:${agentId}`;
  }

  async mark(userId: string, agentId: string): Promise<void> {
    try {
      await this.#redis.set(this.#key(userId, agentId), '1', 'EX', this.#ttlSeconds);
    } catch (err) {
      throw errors.unavailable('Redis', err);
    }
  }

  async isRemoved(userId: string, agentId: string): Promise<boolean> {
    try {
      return (await this.#redis.exists(this.#key(userId, agentId))) === 1;
    } catch (err) {
      throw errors.unavailable('Redis', err);
    }
  }
}
