import { AGENT_ID, CHAT_ID, CREATED_AT, SCHEDULE_ID, TRIGGER_ID } from '../../api/ids.examples.js';

/** Examples of schedules and webhook triggers (docs/api/automations.md). */

export const createScheduleBody = { cron: '0 9 * * MON-FRI', timezone: 'Europe/Paris', enabled: true };

export const schedule = { scheduleId: SCHEDULE_ID, agentId: AGENT_ID, cron: '0 9 * * MON-FRI', timezone: 'Europe/Paris', enabled: true, nextRunAt: '2024-05-02T07:00:00.000Z', alias: null as string | null, createdAt: CREATED_AT };

export const scheduleParams = { agentId: AGENT_ID, scheduleId: SCHEDULE_ID };

export const createTriggerBody = { name: 'GitHub issues' };

const trigger = { triggerId: TRIGGER_ID, agentId: AGENT_ID, name: 'GitHub issues', alias: 'production' as string | null, createdAt: CREATED_AT };

export const createdTrigger = { ...trigger, secret: 'whsec_5p2Jm9QxL0aRt7VbN3cY8kE1' };

export const triggerList = { triggers: [trigger] };

export const triggerParams = { agentId: AGENT_ID, triggerId: TRIGGER_ID };

export const hookParams = { triggerId: TRIGGER_ID };

export const hookBody = '{"action":"opened","issue":{"number":42}}';

export const hookAccepted = { triggerId: TRIGGER_ID, chatId: CHAT_ID };
