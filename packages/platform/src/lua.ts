/**
 * Every Lua script a service sends to Redis is built by luaScript(), which starts it with Redis
 * 7's shebang (`#!lua`). A script with a shebang is held to the key rule of Redis Cluster by the
 * server itself: every key it declares and every key it touches through `redis.call` must hash
 * to one slot, or the call fails with "Script attempted to access keys that do not hash to the
 * same slot" (scripts without one are let through, for compatibility). Our scripts build many of
 * their keys inside Lua (a folder's child set, a path's history), all under the user's hash tag;
 * with the shebang, the end-to-end suites on the Redis Cluster (the e2e-scaled project) prove
 * that they stay in the declared slot, and `test/lua-scripts.unit.test.ts` that no script is
 * sent without it. docs/operations.md#redis-durability has what this asks of the server.
 *
 * A shebang script also declares what it may do when Redis is full (`maxmemory` reached, the
 * policy `noeviction`): with no flag it is refused whole (the caller answers 503), where one
 * without a shebang would run until its first growing write and stop there, half done.
 * - `readOnly` (`no-writes`): it only reads; it runs when Redis is full, and a write in it fails.
 * - `allowOom` (`allow-oom`): it takes no memory (a lease or a session's lifetime renewed) or
 *   frees more than it takes (a release, a permanent delete, the sweeper's claim), so it runs
 *   when Redis is full, as such a script ran before the shebang: that is how memory comes back.
 */
export function luaScript(body: string, options: { readOnly?: boolean; allowOom?: boolean } = {}): string {
  const flags = [options.readOnly ? 'no-writes' : '', options.allowOom ? 'allow-oom' : ''].filter(Boolean);
  return `${flags.length ? `#!lua flags=${flags.join(',')}` : '#!lua'}\n${body}`;
}
