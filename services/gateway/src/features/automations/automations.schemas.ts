import { z } from 'zod';
import { timestamp, wellFormed } from '../../api/schemas.js';

const agentId = z.string().describe('`agt_` + 32 lowercase hex');

export const ScheduleIdParams = z.object({ agentId, scheduleId: z.string().describe('`sch_` + 32 lowercase hex') }).strict();
export const TriggerIdParams = z.object({ agentId, triggerId: z.string().describe('`trg_` + 32 lowercase hex') }).strict();
export const HookParams = z.object({ triggerId: z.string().describe('`trg_` + 32 lowercase hex') }).strict();

export const CreateScheduleBody = z
  .object({
    cron: z
      .string()
      .min(1)
      .max(200)
      .describe('5 fields: minute hour day-of-month month day-of-week, e.g. "*/15 * * * *" or "0 9 * * MON-FRI" (no seconds, years or @nicknames); day-of-month and day-of-week are OR-ed as in Vixie cron'),
    timezone: z.string().min(1).max(64).optional().describe('IANA time zone the cron is read in, default "UTC"; returned as sent (canonical letter case)'),
    enabled: z.boolean().optional().describe('default true; a disabled schedule never runs and has nextRunAt null'),
    alias: z.string().max(200).optional().describe('each run starts its chat on the config this alias names at run time (404 ALIAS_NOT_FOUND when there is none now)'),
  })
  .strict()
  .meta({ id: 'CreateScheduleRequest' });

export const Schedule = z
  .object({
    scheduleId: z.string(),
    agentId: z.string(),
    cron: z.string().describe('the 5 fields, separated by one space'),
    timezone: z.string(),
    enabled: z.boolean(),
    nextRunAt: timestamp.nullable().describe('when the next run starts a chat (titled "Scheduled run"); null when disabled'),
    createdAt: timestamp,
    alias: z.string().nullable().describe('the alias runs go through, or null (the current config)'),
  })
  .meta({ id: 'Schedule' });

export const ScheduleList = z.object({ schedules: z.array(Schedule).describe('newest first') }).meta({ id: 'ScheduleList' });

const codePoints = (s: string) => [...s].length;

export const CreateTriggerBody = z
  .object({
    name: wellFormed(z.string())
      .refine((s) => codePoints(s) <= 200, 'must be at most 200 characters')
      .optional()
      .describe('default ""; at most 200 characters; chats it starts are titled "Webhook: <name>"'),
    alias: z.string().max(200).optional().describe('each call starts its chat on the config this alias names at call time (404 ALIAS_NOT_FOUND when there is none now)'),
  })
  .strict()
  .meta({ id: 'CreateTriggerRequest' });

export const Trigger = z
  .object({ triggerId: z.string(), agentId: z.string(), name: z.string(), createdAt: timestamp, alias: z.string().nullable().describe('the alias calls go through, or null') })
  .meta({ id: 'Trigger' });

export const CreatedTrigger = Trigger.extend({
  secret: z.string().describe('shown only in this response: the HMAC key (its UTF-8 bytes) for X-Signature'),
}).meta({ id: 'CreatedTrigger' });

export const TriggerList = z.object({ triggers: z.array(Trigger).describe('newest first; secrets are never listed') }).meta({ id: 'TriggerList' });

export const HookAccepted = z
  .object({ triggerId: z.string(), chatId: z.string().describe('the chat the call started') })
  .meta({ id: 'HookAccepted' });

export const HookBody = z.string().describe('any bytes, at most 1 MiB; signed as they are sent (no decoding, no re-encoding)');
