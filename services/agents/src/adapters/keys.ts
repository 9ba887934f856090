import { userTag } from '@workspace/platform';

/**
 * Redis keys of one user. Every key carries the user's hash tag, so all of them share one slot
 * and a MULTI over any of them (and the user's outbox) runs on Redis Cluster too.
 */
export function keysOf(userId: string) {
  const tag = userTag(userId);
  const base = `agents:${tag}`;
  return {
    tag,
    /** Hash: the Agent record and the summary of its current config. */
    agent: (agentId: string) => `${base}:agent:${agentId}`,
    /** Sorted set, all scores 0: `<createdAt>|<agentId>`, so reverse lex order is the list order. */
    index: `${base}:index`,
    /** String with a TTL: the Agent id a CreateAgent with this idempotency key made. */
    agentByKey: (key: string) => `${base}:agent-key:${key}`,
    /** Sorted set of an Agent's stored config ids, scored by version number. */
    configs: (agentId: string) => `${base}:configs:${agentId}`,
    config: (configId: string) => `${base}:config:${configId}`,
    /** Hash: config id → number of chats pinning it. */
    pins: (agentId: string) => `${base}:pins:${agentId}`,
    /** Sorted set, all scores 0: `<createdAt>|<chatId>`. */
    chats: (agentId: string) => `${base}:chats:${agentId}`,
    chat: (chatId: string) => `${base}:chat:${chatId}`,
    /** Hash: alias name → JSON alias record (docs/api/agents.md#aliases). */
    aliases: (agentId: string) => `${base}:aliases:${agentId}`,
    /** Hash: alias name → JSON array of {configId, routing?, from}, newest first. */
    aliasHistory: (agentId: string) => `${base}:alias-history:${agentId}`,
    /** Hash: `<alias>|<configId>` → chats started through the alias on that config in its current period. */
    aliasStats: (agentId: string) => `${base}:alias-stats:${agentId}`,
    /** String with a TTL: the chat id a CreateChat with this idempotency key made for the Agent. */
    chatByKey: (agentId: string, key: string) => `${base}:chat-key:${agentId}:${key}`,
  };
}

export type UserKeys = ReturnType<typeof keysOf>;

/** A member of a lex-ordered index: ISO timestamps have a fixed width, so bytes order by time, then id. */
export function indexMember(createdAt: string, id: string): string {
  return `${createdAt}|${id}`;
}

export function idOfMember(member: string): string {
  return member.slice(member.lastIndexOf('|') + 1);
}
