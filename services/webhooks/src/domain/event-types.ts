import { EVENT_DATA } from '@workspace/platform';

/** Every event type a webhook can ask for (docs/events.md#types; the schemas in packages/platform). */
export const EVENT_TYPES: readonly string[] = Object.keys(EVENT_DATA).sort();

export const ALL_EVENTS = '*';

/** The first entry that is neither a known type nor `*`, or undefined. */
export function unknownEventType(events: readonly string[]): string | undefined {
  return events.find((e) => e !== ALL_EVENTS && !EVENT_TYPES.includes(e));
}

/** Whether a webhook asking for `events` gets an event of `type`. */
export function wants(events: readonly string[], type: string): boolean {
  return events.includes(ALL_EVENTS) || events.includes(type);
}
