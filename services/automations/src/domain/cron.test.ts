import { describe, expect, it } from 'vitest';
import { INVALID_CRON, nextRunAfter, parseCronSpec, parseTimezone } from './cron.js';

const now = new Date('2026-03-28T10:15:30.000Z');

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as { code?: string; details?: { field?: string } }).code === 'INVALID_ARGUMENT' ? (err as { details?: { field?: string } }).details?.field : 'other error';
  }
  return undefined;
}

describe('cron', () => {
  it.each(['* * * * *', '*/5 * * * *', '0 9 * * MON-FRI', '30 2 1,15 * *', '0 0 * JAN,JUL 0', '  0   12  *  *  *  '])('cron — accepts the 5-field expression %j', (cron) => {
    expect(fieldOf(() => parseCronSpec(cron, 'UTC', now))).toBeUndefined();
  });

  it.each(['', '* * * *', '*/5 * * * * *', '0 0 * * * 2030', '@daily', '@hourly', '61 * * * *', '* 24 * * *', 'a b c d e', '0 0 30 2 *'])('cron — refuses %j with details.field "cron"', (cron) => {
    expect(fieldOf(() => parseCronSpec(cron, 'UTC', now))).toBe('cron');
  });

  it.each(['61 * * * *', '* 24 * * *', 'a b c d e', '*/0 * * * *', '1-2-3 * * * *', '* * * FOO *'])('cron — %j is refused in our words, never croner\'s', (cron) => {
    let caught: unknown;
    try {
      parseCronSpec(cron, 'UTC', now);
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: 'INVALID_ARGUMENT', message: INVALID_CRON, details: { field: 'cron' } });
    expect((caught as Error).message).not.toMatch(/CronPattern|croner|Invalid|illegal/i);
  });

  it.each(['Mars/Olympus', '+01:00', 'UTC+1', '', '../etc/passwd', 'Europe/Berlin\n'])('cron — refuses the time zone %j with details.field "timezone"', (tz) => {
    expect(fieldOf(() => parseCronSpec('* * * * *', tz, now))).toBe('timezone');
  });

  it('cron — keeps the zone as sent, with canonical letter case', () => {
    expect(parseTimezone('Europe/Berlin')).toBe('Europe/Berlin');
    expect(parseTimezone('europe/berlin')).toBe('Europe/Berlin');
    expect(parseTimezone('Etc/UTC')).toBe('Etc/UTC');
    expect(parseTimezone('utc')).toBe('UTC');
  });

  it('cron — normalizes white space between fields', () => {
    expect(parseCronSpec(' 0\t9  * * 1 ', 'UTC', now).cron).toBe('0 9 * * 1');
  });

  it('cron — the next run is strictly after the reference, at a whole minute', () => {
    const spec = parseCronSpec('* * * * *', 'UTC', now);
    expect(nextRunAfter(spec, now)?.toISOString()).toBe('2026-03-28T10:16:00.000Z');
    expect(nextRunAfter(spec, new Date('2026-03-28T10:16:00.000Z'))?.toISOString()).toBe('2026-03-28T10:17:00.000Z');
  });

  it('cron — the zone decides the wall clock: 09:00 in Berlin is 08:00Z in winter, 07:00Z in summer', () => {
    const spec = parseCronSpec('0 9 * * *', 'Europe/Berlin', now);
    expect(nextRunAfter(spec, new Date('2026-03-27T12:00:00Z'))?.toISOString()).toBe('2026-03-28T08:00:00.000Z');
    // Summer time starts on 2026-03-29.
    expect(nextRunAfter(spec, new Date('2026-03-28T12:00:00Z'))?.toISOString()).toBe('2026-03-29T07:00:00.000Z');
  });

  it('cron — day-of-month and day-of-week are OR-ed, as in Vixie cron', () => {
    // The 1st of the month or any Monday: after Sat 2026-03-28 comes Mon 2026-03-30.
    const spec = parseCronSpec('0 0 1 * 1', 'UTC', now);
    expect(nextRunAfter(spec, now)?.toISOString()).toBe('2026-03-30T00:00:00.000Z');
  });
});
