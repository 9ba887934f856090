import { createEvent } from '@workspace/platform';

export const EVENT_SOURCE = '/workspace/files';

/**
 * The CloudEvent template of one change: id, time, source and trace context are set here; the
 * index fills in type, subject and data when it commits (it alone knows the final path).
 */
export function eventTemplate(userId: string, path: string): string {
  return JSON.stringify(createEvent('file.deleted', { source: EVENT_SOURCE, subject: path, data: { userId, path } }));
}
