import { describe, expect, it } from 'vitest';
import { eventId, parsePosition, positionOfEventId, positionText } from './event-ids.js';
import { after } from './updates-stream.js';

const SESSION = 'a'.repeat(32);
const CURSOR = 'WyJjaGFuZ2VzOi9maWxlcyIsIjE3LTEiXQ.abcdefghijklmnopqrstuvwx';

describe('mcp event ids', () => {
  it('event ids — an id gives back its position, for its session only', () => {
    for (const p of [{ cursor: CURSOR, changes: 0, uris: 0 }, { cursor: CURSOR, changes: 41, uris: 2 }]) {
      const id = eventId(SESSION, p);
      expect(id).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
      expect(positionOfEventId(SESSION, id)).toEqual(p);
      expect(positionOfEventId('b'.repeat(32), id)).toBeUndefined();
    }
  });

  it('event ids — altered, cut, extended or made up → not an id of the session', () => {
    const id = eventId(SESSION, { cursor: CURSOR, changes: 3, uris: 1 });
    const [payload, mac] = id.split('.') as [string, string];
    const flip = (s: string, i: number) => `${s.slice(0, i)}${s[i] === 'A' ? 'B' : 'A'}${s.slice(i + 1)}`;
    for (const bad of [flip(id, 0), flip(id, id.length - 1), `${payload}.${mac.slice(1)}`, `${id}.x`, payload, `${id}=`, '', 'made-up', `${payload}.${mac}\n`]) {
      expect(positionOfEventId(SESSION, bad), bad).toBeUndefined();
    }
  });

  it('event ids — the stored form: a cursor alone is the position before its changes; anything else is JSON of three parts', () => {
    expect(parsePosition(CURSOR)).toEqual({ cursor: CURSOR, changes: 0, uris: 0 });
    expect(positionText({ cursor: CURSOR, changes: 0, uris: 0 })).toBe(CURSOR);
    expect(parsePosition(positionText({ cursor: CURSOR, changes: 0, uris: 4 }))).toEqual({ cursor: CURSOR, changes: 0, uris: 4 });
    for (const bad of ['', '[', '[]', `["${CURSOR}",1]`, `["${CURSOR}",-1,0]`, `["${CURSOR}",1.5,0]`, '["",1,0]', '[1,1,0]', `["${CURSOR}",1,0,0]`]) {
      expect(parsePosition(bad), bad).toBeUndefined();
    }
  });

  it('event ids — after a read: past its changes, or still ahead by what the read did not reach', () => {
    const pos = { cursor: 'c1', changes: 2, uris: 1 };
    expect(after(pos, { changes: [1, 2, 3], cursor: 'c2' })).toEqual({ cursor: 'c2', changes: 0, uris: 0 });
    expect(after(pos, { changes: [1, 2], cursor: 'c2' })).toEqual({ cursor: 'c2', changes: 0, uris: 1 });
    expect(after(pos, { changes: [1], cursor: 'c2' })).toEqual({ cursor: 'c2', changes: 1, uris: 1 });
    expect(after({ cursor: 'c1', changes: 0, uris: 0 }, { changes: [], cursor: 'c1' })).toEqual({ cursor: 'c1', changes: 0, uris: 0 });
  });
});
