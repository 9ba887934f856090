import type { WireResponse } from './http.js';

export interface AgentRec {
  agentId: string;
  configId: string;
}
export interface ChildRec {
  agentId: string;
  /** chatId, scheduleId or triggerId. */
  id: string;
  secret?: string;
}

/** The ids of one user's seeded records, as path parameters name them. */
export interface Owned {
  agents: AgentRec[];
  chats: ChildRec[];
  schedules: ChildRec[];
  triggers: ChildRec[];
  files: string[];
  projects: string[];
  /** Outbound webhook ids. */
  webhooks: string[];
}

/** The victim: ids and marker strings the fuzzing user must never see unless it sent them. */
export interface Victim extends Owned {
  sub: string;
  /** Its changes and listing cursors: another user's cursor must be refused, never followed. */
  cursors: string[];
  secrets: string[];
}

/** The alias every seeded Agent has (docs/api/agents.md#aliases), naming its config. */
export const FUZZ_ALIAS = 'fuzz';

/** Picks the `n`-th element, wrapping; undefined for an empty list. */
export function pick<T>(list: readonly T[], n: number): T | undefined {
  return list.length === 0 ? undefined : list[n % list.length];
}

/**
 * What the fuzzing user owns right now: seeded at the start, then kept up to date from the
 * answers (a created Agent joins the pool, a deleted one leaves it), so that "valid" requests
 * keep naming things that exist.
 */
export class World {
  readonly self: Owned;
  changeCursors: string[] = [];
  /** Projects archived by an update: no new Agent can be put in them. */
  readonly archived = new Set<string>();
  /**
   * The seeded ids, paths and names: valid deletes and moves take what the fuzzer made
   * itself when there is any, so that valid requests keep finding something to name.
   */
  private readonly pinned: Set<string>;
  private serial = 0;

  constructor(
    seeded: Owned,
    readonly victim: Victim,
    readonly tag: string,
  ) {
    this.self = structuredClone(seeded);
    const s = this.self;
    this.pinned = new Set([...s.agents.map((a) => a.agentId), ...[...s.chats, ...s.schedules, ...s.triggers].map((c) => c.id), ...s.files, ...s.projects, ...s.webhooks]);
  }

  /** What a removing request should take: the unpinned part of `list`, or all of it when that is empty. */
  removable<T>(list: T[], key: (t: T) => string): T[] {
    const free = list.filter((t) => !this.pinned.has(key(t)));
    return free.length > 0 ? free : list;
  }

  /** A fresh name no earlier request used (paths, project names). */
  fresh(prefix: string): string {
    return `${prefix}${this.tag}-${(this.serial++).toString(36)}`;
  }

  /** The path parameters of one record: a chat for {agentId, chatId}, and so on. */
  params(names: string[], owner: Owned, n: number, removing = false): Record<string, string> | undefined {
    if (names.includes('webhookId')) {
      const id = pick(removing ? this.removable(owner.webhooks, (w) => w) : owner.webhooks, n);
      return id === undefined ? undefined : { webhookId: id };
    }
    const child = names.includes('chatId') ? owner.chats : names.includes('scheduleId') ? owner.schedules : names.includes('triggerId') ? owner.triggers : undefined;
    if (child) {
      const rec = pick(removing ? this.removable(child, (c) => c.id) : child, n);
      if (!rec) return undefined;
      return Object.fromEntries(names.map((name) => [name, name === 'agentId' ? rec.agentId : rec.id]));
    }
    const agent = pick(removing ? this.removable(owner.agents, (a) => a.agentId) : owner.agents, n);
    const value = (a: AgentRec, name: string) => (name === 'agentId' ? a.agentId : name === 'configId' ? a.configId : name === 'alias' ? FUZZ_ALIAS : `${name}?`);
    return agent && Object.fromEntries(names.map((name) => [name, value(agent, name)]));
  }

  triggerSecret(triggerId: string): string | undefined {
    return this.self.triggers.find((t) => t.id === triggerId)?.secret;
  }

  configOf(agentId: string): string | undefined {
    return this.self.agents.find((a) => a.agentId === agentId)?.configId;
  }

  /** Learns from a successful answer what now exists. */
  observe(operationId: string, params: Record<string, string>, res: WireResponse): void {
    if (res.status >= 300) return;
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(res.text) as Record<string, unknown>;
    } catch {
      // Downloads, exports and empty answers teach nothing.
    }
    const s = this.self;
    const str = (key: string) => (typeof body[key] === 'string' ? (body[key] as string) : undefined);
    const without = <T>(list: T[], drop: (t: T) => boolean) => list.splice(0, list.length, ...list.filter((t) => !drop(t)));
    switch (operationId) {
      case 'createAgent':
      case 'getAgent':
      case 'updateAgent': {
        const agentId = str('agentId');
        const configId = str('currentConfigId');
        if (!agentId || !configId) return;
        const known = s.agents.find((a) => a.agentId === agentId);
        if (known) known.configId = configId;
        else if (operationId === 'createAgent') s.agents.push({ agentId, configId });
        return;
      }
      case 'deleteAgent':
        without(s.agents, (a) => a.agentId === params.agentId);
        for (const list of [s.chats, s.schedules, s.triggers]) without(list, (c) => c.agentId === params.agentId);
        return;
      case 'createChat':
        if (str('chatId')) s.chats.push({ agentId: params.agentId!, id: str('chatId')! });
        return;
      case 'createSchedule':
        if (str('scheduleId')) s.schedules.push({ agentId: params.agentId!, id: str('scheduleId')! });
        return;
      case 'deleteSchedule':
        without(s.schedules, (c) => c.id === params.scheduleId);
        return;
      case 'createTrigger':
        if (str('triggerId')) s.triggers.push({ agentId: params.agentId!, id: str('triggerId')!, secret: str('secret')! });
        return;
      case 'deleteTrigger':
        without(s.triggers, (c) => c.id === params.triggerId);
        return;
      case 'createWebhook':
        if (str('webhookId')) s.webhooks.push(str('webhookId')!);
        return;
      case 'deleteWebhook':
        without(s.webhooks, (w) => w === params.webhookId);
        return;
      case 'createProject':
        if (str('name')) s.projects.push(str('name')!);
        return;
      case 'updateProject':
        if (body.archived === true) this.archived.add(str('name')!);
        else this.archived.delete(str('name')!);
        return;
      case 'uploadFile':
      case 'copyFile':
        if (str('path') && !s.files.includes(str('path')!)) s.files.push(str('path')!);
        return;
      case 'moveFile':
        without(s.files, (p) => p === str('from') || p.startsWith(`${str('from')}/`));
        if (str('path')) s.files.push(str('path')!);
        return;
      case 'deleteFile':
        without(s.files, (p) => p === str('path') || p.startsWith(`${str('path')}/`));
        return;
      case 'getChangesCursor':
      case 'getChanges':
        if (str('cursor') && !this.changeCursors.includes(str('cursor')!)) this.changeCursors.push(str('cursor')!);
        if (this.changeCursors.length > 50) this.changeCursors.shift();
        return;
    }
  }
}
