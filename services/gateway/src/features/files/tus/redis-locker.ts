import { randomBytes } from 'node:crypto';
import { ERRORS, type Lock, type Locker, type RequestRelease } from '@tus/utils';
import { luaScript, type RedisClient } from '@workspace/platform';

const RELEASE = luaScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`, { allowOom: true });
const RENEW = luaScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`, { allowOom: true });

/**
 * tus's per-upload lock across every gateway replica: SET NX with a lease, renewed while held,
 * released only by its holder. A holder on this replica is asked to let go first (tus's
 * `requestRelease`: a client resuming while its old, cut-off PATCH still runs here).
 */
export class RedisLocker implements Locker {
  readonly local = new Map<string, RequestRelease>();

  constructor(readonly options: { redis: RedisClient; leaseMs?: number; acquireTimeoutMs?: number }) {}

  newLock(id: string): Lock {
    return new RedisLock(id, this);
  }
}

class RedisLock implements Lock {
  private readonly token = randomBytes(16).toString('hex');
  private renew: NodeJS.Timeout | undefined;

  constructor(
    private readonly id: string,
    private readonly locker: RedisLocker,
  ) {}

  private get key(): string {
    return `tus:lock:{${this.id}}`;
  }

  async lock(signal: AbortSignal, requestRelease: RequestRelease): Promise<void> {
    const { redis, leaseMs = 30_000, acquireTimeoutMs = 30_000 } = this.locker.options;
    const deadline = Date.now() + acquireTimeoutMs;
    for (let wait = 10; ; wait = Math.min(wait * 2, 250)) {
      if ((await redis.set(this.key, this.token, 'PX', leaseMs, 'NX')) === 'OK') break;
      await this.locker.local.get(this.id)?.();
      if (signal.aborted || Date.now() > deadline) throw ERRORS.ERR_LOCK_TIMEOUT;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
    this.locker.local.set(this.id, requestRelease);
    this.renew = setInterval(() => void redis.eval(RENEW, 1, this.key, this.token, leaseMs).catch(() => undefined), leaseMs / 3);
    this.renew.unref();
  }

  async unlock(): Promise<void> {
    clearInterval(this.renew);
    this.locker.local.delete(this.id);
    await this.locker.options.redis.eval(RELEASE, 1, this.key, this.token);
  }
}
