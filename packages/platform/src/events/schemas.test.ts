import { describe, expect, it } from 'vitest';
import { createEvent, parseEvent, subjectOf } from './schemas.js';

describe('event schemas', () => {
  it('event schemas — types map to stream subjects', () => {
    expect(subjectOf('agent.deleted')).toBe('agents.deleted');
    expect(subjectOf('chat.created')).toBe('chats.created');
    expect(subjectOf('file.deleted')).toBe('files.deleted');
  });

  it('event schemas — a CloudEvents 1.0 envelope with the owning user in data, round-tripped', () => {
    const event = createEvent('agent.deleted', { source: '/workspace/agents', subject: 'agt_1', data: { userId: 'alice', agentId: 'agt_1' } });
    expect(Object.keys(event).sort()).toEqual(['data', 'id', 'source', 'specversion', 'subject', 'time', 'type']);
    expect(event).toMatchObject({ specversion: '1.0', type: 'agent.deleted', data: { userId: 'alice' } });
    expect(event.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(parseEvent(JSON.stringify(event))).toEqual(event);
  });

  it('event schemas — invalid data and unknown types are refused', () => {
    expect(() => createEvent('agent.deleted', { source: 's', subject: 'x', data: { agentId: 'x' } as never })).toThrow();
    const event = createEvent('agent.deleted', { source: 's', subject: 'x', data: { userId: 'u', agentId: 'x' } });
    expect(() => parseEvent({ ...event, type: 'agent.exploded' })).toThrow(/unknown event type/);
    expect(() => parseEvent({ ...event, specversion: '0.3' })).toThrow();
  });
});
