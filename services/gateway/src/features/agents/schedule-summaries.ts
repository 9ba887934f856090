import type { OutgoingContext } from '@workspace/platform';
import type { AutomationsClient } from '../../clients.js';

type ListItem = { agentId: string; activeScheduleCount: number; nextRunAt: string | null };

/**
 * The list items with their schedule counts and next runs, asked of the automations service
 * (which owns schedules) in one call for the whole page. Without that service the items keep
 * what the agents service said (0 and null).
 */
export async function withScheduleSummaries<T extends ListItem>(automations: AutomationsClient | undefined, items: T[], call: OutgoingContext): Promise<T[]> {
  if (!automations || items.length === 0) return items;
  const { summaries } = await automations.summarizeSchedules({ agentIds: items.map((i) => i.agentId) }, call);
  const byAgent = new Map(summaries.map((s) => [s.agentId, s]));
  return items.map((item) => {
    const summary = byAgent.get(item.agentId);
    return summary ? { ...item, activeScheduleCount: summary.activeScheduleCount, nextRunAt: summary.nextRunAt ?? null } : item;
  });
}
