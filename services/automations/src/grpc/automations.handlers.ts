import { requireUser, type AsyncService, type CallContext } from '@workspace/platform';
import type { AutomationsServiceService, Schedule as ScheduleProto, Trigger as TriggerProto } from '@workspace/proto/workspace/automations/v1/automations';
import type { Schedule, Scope, TriggerRecord } from '../domain/ports.js';
import type { Schedules } from '../domain/schedules.js';
import type { Triggers } from '../domain/triggers.js';

function scopeOf(ctx: CallContext): Scope {
  return { userId: requireUser(ctx), requestId: ctx.requestId, signal: ctx.signal };
}

function scheduleToProto(s: Schedule): ScheduleProto {
  return { scheduleId: s.scheduleId, agentId: s.agentId, cron: s.cron, timezone: s.timezone, enabled: s.enabled, nextRunAt: s.nextRunAt ?? undefined, createdAt: s.createdAt, alias: s.alias ?? undefined };
}

function triggerToProto(t: TriggerRecord): TriggerProto {
  return { triggerId: t.triggerId, agentId: t.agentId, name: t.name, createdAt: t.createdAt, alias: t.alias ?? undefined };
}

/** Decode → domain → encode; every rule lives in the domain. */
export function automationsHandlers(deps: { schedules: Schedules; triggers: Triggers }): AsyncService<typeof AutomationsServiceService> {
  const { schedules, triggers } = deps;
  return {
    createSchedule: async (req, ctx) => scheduleToProto(await schedules.create(scopeOf(ctx), req.agentId, { cron: req.cron, timezone: req.timezone, enabled: req.enabled, alias: req.alias })),
    listSchedules: async (req, ctx) => ({ schedules: (await schedules.list(scopeOf(ctx), req.agentId)).map(scheduleToProto) }),
    deleteSchedule: async (req, ctx) => {
      await schedules.delete(scopeOf(ctx), req.agentId, req.scheduleId);
      return {};
    },
    createTrigger: async (req, ctx) => {
      const { trigger, secret } = await triggers.create(scopeOf(ctx), req.agentId, req.name, req.alias);
      return { trigger: triggerToProto(trigger), secret };
    },
    listTriggers: async (req, ctx) => ({ triggers: (await triggers.list(scopeOf(ctx), req.agentId)).map(triggerToProto) }),
    deleteTrigger: async (req, ctx) => {
      await triggers.delete(scopeOf(ctx), req.agentId, req.triggerId);
      return {};
    },
    // No user on this call: the trigger id names the owner and the signature proves the caller.
    fireTrigger: async (req, ctx) => {
      const { trigger, chatId } = await triggers.fire(req.triggerId, req.body, req.signature, ctx.requestId);
      return { triggerId: trigger.triggerId, chatId };
    },
    summarizeSchedules: async (req, ctx) => ({
      summaries: (await schedules.summarize(scopeOf(ctx), req.agentIds)).map((s) => ({ agentId: s.agentId, activeScheduleCount: s.activeScheduleCount, nextRunAt: s.nextRunAt ?? undefined })),
    }),
  };
}
