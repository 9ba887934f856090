import { errors, isAppError } from './errors/app-error.js';

const UNREACHABLE = /Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EHOSTUNREACH|Stream isn't writeable|enableOfflineQueue|All nodes failed|Failed to refresh slots cache|CLUSTERDOWN|TRYAGAIN|LOADING/;

/**
 * Replies of a Redis that is there but cannot take the command now: full under noeviction
 * (OOM), a replica or a failover (READONLY, MASTERDOWN), a failed snapshot (MISCONF), a script
 * running too long (BUSY, not BUSYGROUP), still loading its data (LOADING).
 */
const REFUSING = /^(OOM|READONLY|MASTERDOWN|MISCONF|BUSY|LOADING) /;

/** True for failures that mean "Redis cannot serve now" rather than "a command is wrong". */
export function isRedisUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return err.name === 'MaxRetriesPerRequestError' || err.name === 'ClusterAllFailedError' || (typeof code === 'string' && UNREACHABLE.test(code)) || UNREACHABLE.test(err.message) || REFUSING.test(err.message);
}

/**
 * The same object, with every async method's "Redis is down" failures turned into UNAVAILABLE
 * (503 with Retry-After at the edge) instead of INTERNAL; anything else passes unchanged.
 */
export function withUnavailableErrors<T extends object>(target: T, what = 'the store'): T {
  return new Proxy(target, {
    get(obj, key, receiver) {
      const value = Reflect.get(obj, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(obj, args);
        if (!(result instanceof Promise)) return result;
        return result.catch((err: unknown) => {
          throw !isAppError(err) && isRedisUnavailable(err) ? errors.unavailable(what, err) : err;
        });
      };
    },
  });
}
