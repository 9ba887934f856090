import type { ScheduleRepo, TriggerRepo } from './ports.js';

/**
 * `agent.deleted`: the Agent's schedules (and due runs) and triggers (and their lookup keys)
 * go. Idempotent: a second delivery finds nothing left. Each repo tombstones the Agent before
 * it reads what to delete, so a create that raced the deletion is refused rather than left behind.
 */
export async function removeAgent(repos: { schedules: ScheduleRepo; triggers: TriggerRepo }, userId: string, agentId: string): Promise<void> {
  await repos.schedules.deleteAgent(userId, agentId);
  await repos.triggers.deleteAgent(userId, agentId);
}
